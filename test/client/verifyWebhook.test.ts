import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifyWebhook, WebhookVerificationError, type WebhookEvent } from "../../src/client/index.js";
import { Redis } from "ioredis";
import { serviceKeys } from "../../src/queue/queueNames.js";
import { signWebhook, webhookIdFor } from "../../src/webhooks/signing.js";
import { markedConversation } from "../helpers/markedConversation.js";
import { TEST_WEBHOOK_SECRET } from "../helpers/serviceConfig.js";
import { waitUntil } from "../helpers/waitUntil.js";
import { startServiceUnderTest, type ServiceUnderTest } from "./serviceUnderTest.js";

// The service builds its callbacks as this same type (queue/jobLifecycle.ts), so they cannot drift apart.
const event: WebhookEvent = {
  type: "compaction.failed",
  id: "cmp_1",
  conversationId: null,
  error: { code: "summarizer_failed", message: "the summarizer kept failing", status: "failed" },
  metadata: null,
};
const body = JSON.stringify(event);
const otherSecret = `whsec_${Buffer.from("another-secret-of-enough-length!").toString("base64")}`;

function signed(payload = body, at = new Date()) {
  return signWebhook(TEST_WEBHOOK_SECRET, webhookIdFor("compaction.failed", "cmp_1"), payload, at);
}

function failure(run: () => unknown): WebhookVerificationError {
  try {
    run();
  } catch (err) {
    if (err instanceof WebhookVerificationError) return err;
    throw err;
  }
  throw new Error("expected verification to fail");
}

describe("verifyWebhook", () => {
  it("returns the event of a body signed with the service's signer", () => {
    expect(verifyWebhook(body, signed(), TEST_WEBHOOK_SECRET)).toEqual(event);
  });

  it("reads the headers as Node, fetch or a framework hands them over", () => {
    const headers = signed();
    const upperCase = Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toUpperCase(), value]));
    expect(verifyWebhook(Buffer.from(body), new Headers(headers), TEST_WEBHOOK_SECRET).id).toBe("cmp_1");
    expect(verifyWebhook(new TextEncoder().encode(body), upperCase, TEST_WEBHOOK_SECRET).id).toBe("cmp_1");
  });

  it("refuses a body changed after signing", () => {
    const tampered = body.replace('"failed"}', '"cancelled"}');
    expect(failure(() => verifyWebhook(tampered, signed(), TEST_WEBHOOK_SECRET)).message).toMatch(/failed verification: .*signature/i);
  });

  it("refuses a signature made with another secret", () => {
    expect(failure(() => verifyWebhook(body, signed(), otherSecret)).message).toMatch(/signature/i);
  });

  it("refuses a delivery signed too long ago to be anything but a replay", () => {
    const old = signed(body, new Date(Date.now() - 10 * 60_000));
    expect(failure(() => verifyWebhook(body, old, TEST_WEBHOOK_SECRET)).message).toMatch(/timestamp/i);
  });

  it("says which header is missing from an unsigned request", () => {
    const { "webhook-signature": _signature, ...unsigned } = signed();
    expect(failure(() => verifyWebhook(body, unsigned, TEST_WEBHOOK_SECRET)).message).toMatch(/webhook-signature header is missing/);
  });

  it("refuses a signed body that is not an event this client knows", () => {
    const future = JSON.stringify({ type: "compaction.progress", id: "cmp_1" });
    expect(failure(() => verifyWebhook(future, signed(future), TEST_WEBHOOK_SECRET)).message).toMatch(/compaction\.progress/);
  });
});

// Results stored either way (COMPACTD_RESULT_ENCODING) reach the job view and the callback alike.
describe.each(["base64", "raw"])("verifyWebhook on callbacks the running service delivers, results stored as %s", (encoding) => {
  let service: ServiceUnderTest;
  beforeAll(async () => {
    service = await startServiceUnderTest(`client-webhook-${encoding}`, { env: { COMPACTD_RESULT_ENCODING: encoding } });
  });
  afterAll(async () => {
    await service.close();
  });

  it("reads a compaction.completed whose result is the job's, and a batch.completed", async () => {
    const client = service.client();
    const { receiver } = service.harness;
    const job = await client.compact(
      { messages: markedConversation(`hook-${randomUUID()}`), contextWindow: 20_000, settings: { reserveTokens: 4_000 }, callbackUrl: receiver.url() },
      { wait: 30 },
    );
    const batch = await client.batch([{ messages: [{ role: "user", content: "short" }], contextWindow: 20_000 }], { callbackUrl: receiver.url() });
    await waitUntil(() => receiver.received.length >= 2, "both callbacks arrive", 20_000);

    const events = receiver.received.map((callback) => verifyWebhook(callback.body, callback.headers, TEST_WEBHOOK_SECRET));
    const completed = events.find((e) => e.type === "compaction.completed");
    const batchDone = events.find((e) => e.type === "batch.completed");
    expect(completed).toMatchObject({ id: "id" in job ? job.id : "", result: "result" in job ? job.result : {} });
    // Stored in the form configured: raw bytes behind a zero byte, or base64 text.
    const redis = new Redis(service.harness.config.redisUrl!);
    const stored = await redis.getBuffer(serviceKeys(service.harness.config.queuePrefix).result("id" in job ? job.id : ""));
    redis.disconnect();
    expect(stored?.[0] === 0).toBe(encoding === "raw");
    expect(batchDone).toMatchObject({ id: batch.id, result: { counts: { nothing_to_compact: 1 } } });
  });
});
