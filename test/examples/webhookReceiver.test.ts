import { afterEach, describe, expect, it } from "vitest";
import { startWebhookReceiver, type WebhookReceiver } from "../../examples/webhookReceiver.js";
import type { WebhookEvent } from "../../src/client/index.js";
import { signWebhook, webhookIdFor } from "../../src/webhooks/signing.js";
import { TEST_WEBHOOK_SECRET } from "../helpers/serviceConfig.js";

const body = JSON.stringify({ type: "compaction.failed", id: "cmp_1", conversationId: "c", error: { code: "x", message: "y", status: "failed" }, metadata: null });
const headers = () => signWebhook(TEST_WEBHOOK_SECRET, webhookIdFor("compaction.failed", "cmp_1"), body);

let receiver: WebhookReceiver | undefined;
afterEach(async () => {
  await receiver?.close();
});

async function post(payload: string, signed: Record<string, string>): Promise<number> {
  const response = await fetch(receiver!.url, { method: "POST", headers: { "content-type": "application/json", ...signed }, body: payload });
  return response.status;
}

describe("examples/webhookReceiver.ts", () => {
  it("hands a verified event over once, however often it is delivered", async () => {
    const events: WebhookEvent[] = [];
    receiver = await startWebhookReceiver({ secret: TEST_WEBHOOK_SECRET, onEvent: (event) => void events.push(event) });
    expect(await post(body, headers())).toBe(204);
    expect(await post(body, headers())).toBe(204);
    expect(events).toEqual([JSON.parse(body)]);
  });

  it("refuses a body that does not match its signature, without handing anything over", async () => {
    const events: WebhookEvent[] = [];
    receiver = await startWebhookReceiver({ secret: TEST_WEBHOOK_SECRET, onEvent: (event) => void events.push(event) });
    expect(await post(body.replace("cmp_1", "cmp_2"), headers())).toBe(401);
    expect(events).toEqual([]);
  });

  it("answers 500 when handling fails, so the service delivers the event again", async () => {
    let calls = 0;
    receiver = await startWebhookReceiver({
      secret: TEST_WEBHOOK_SECRET,
      onEvent: () => {
        calls++;
        if (calls === 1) throw new Error("database down");
      },
    });
    expect(await post(body, headers())).toBe(500);
    expect(await post(body, headers())).toBe(204);
    expect(calls).toBe(2);
  });
});
