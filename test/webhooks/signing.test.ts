import { randomBytes } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { signWebhook, webhookIdFor } from "../../src/webhooks/signing.js";

const secret = `whsec_${randomBytes(32).toString("base64")}`;

describe("webhookIdFor", () => {
  it("derives the same id for the same event and different ids for different events", () => {
    const id = webhookIdFor("compaction.completed", "cmp_1");
    expect(webhookIdFor("compaction.completed", "cmp_1")).toBe(id);
    expect(webhookIdFor("compaction.failed", "cmp_1")).not.toBe(id);
    expect(webhookIdFor("compaction.completed", "cmp_2")).not.toBe(id);
  });

  it("is a safe BullMQ job id whatever the event id contains", () => {
    expect(webhookIdFor("batch.completed", "a:b:c\n42")).toMatch(/^msg_[0-9a-f]{32}$/);
  });
});

describe("signWebhook", () => {
  it("produces Standard Webhooks headers that the standardwebhooks package verifies", () => {
    const body = JSON.stringify({ type: "compaction.completed", id: "cmp_1" });
    const headers = signWebhook(secret, "msg_1", body);
    expect(headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(new Webhook(secret).verify(body, headers)).toEqual({ type: "compaction.completed", id: "cmp_1" });
  });

  it("signs exactly as the standardwebhooks package does, non-ASCII bodies included", () => {
    const now = new Date("2026-11-30T08:00:00Z");
    for (const body of ["{}", JSON.stringify({ summary: "résumé — 要約 ✓ 🚀", n: 1 }), "x".repeat(100_000)]) {
      expect(signWebhook(secret, "msg_1", body, now)["webhook-signature"]).toBe(new Webhook(secret).sign("msg_1", now, body));
    }
  });

  it("signs a body given as its UTF-8 bytes exactly as the same body given as text", () => {
    const now = new Date("2026-11-30T08:00:00Z");
    const body = JSON.stringify({ summary: "résumé — 要約 ✓ 🚀" });
    expect(signWebhook(secret, "msg_1", Buffer.from(body, "utf8"), now)).toEqual(signWebhook(secret, "msg_1", body, now));
  });

  it("signs a retry with its own timestamp so the receiver's replay window accepts it a day later", () => {
    const body = "{}";
    const dayLater = new Date(Date.now() + 86_400_000);
    const retry = signWebhook(secret, "msg_1", body, dayLater);
    expect(retry["webhook-timestamp"]).toBe(String(Math.floor(dayLater.getTime() / 1000)));
    expect(retry["webhook-id"]).toBe("msg_1");
    // Signed for a day from now: outside today's five-minute window...
    expect(() => new Webhook(secret).verify(body, retry)).toThrow(/timestamp/i);
    // ...while one signed now verifies now.
    expect(() => new Webhook(secret).verify(body, signWebhook(secret, "msg_1", body))).not.toThrow();
  });

  it("makes a tampered body fail verification", () => {
    const headers = signWebhook(secret, "msg_1", '{"a":1}');
    expect(() => new Webhook(secret).verify('{"a":2}', headers)).toThrow();
  });
});
