import { createHash } from "node:crypto";
import { webhookKey, webhookSignature } from "../client/webhookSignature.js";

/**
 * Standard Webhooks signing (https://www.standardwebhooks.com): the receiver
 * verifies `webhook-signature` = `v1,` + base64 HMAC-SHA256 of
 * `<webhook-id>.<webhook-timestamp>.<body>` with the shared `whsec_` secret,
 * using any Standard Webhooks library. The tests verify every signature with
 * the `standardwebhooks` package itself; signing uses node's native HMAC
 * because that package hashes in JavaScript, which costs a busy worker a
 * millisecond per 100 KB callback on its event loop.
 */

export type WebhookHeaders = {
  readonly "webhook-id": string;
  readonly "webhook-timestamp": string;
  readonly "webhook-signature": string;
};

/**
 * The `webhook-id` of the event `type` about `id` (a job or batch id). Derived
 * rather than random so every retry, and a second enqueue after a worker
 * crashed between finishing a job and recording it, carries the same id:
 * receivers deduplicate on it. Hashed so it is a safe BullMQ job id whatever
 * the id looks like.
 */
export function webhookIdFor(type: string, id: string): string {
  return `msg_${createHash("sha256").update(`${type}\n${id}`, "utf8").digest("hex").slice(0, 32)}`;
}

/**
 * Headers for one delivery attempt. The timestamp is the attempt's own, so a
 * retry a day later is not rejected by the receiver's replay window (Standard
 * Webhooks libraries allow five minutes); the id stays the event's.
 */
export function signWebhook(secret: string, webhookId: string, body: string | Uint8Array, now: Date = new Date()): WebhookHeaders {
  const timestamp = Math.floor(now.getTime() / 1000);
  const key = webhookKey(secret);
  // COMPACTD_WEBHOOK_SECRET is checked at start-up (config.ts); this is for a caller that passes another.
  if (key === undefined) throw new TypeError("secret: must be whsec_ followed by base64");
  return {
    "webhook-id": webhookId,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": `v1,${webhookSignature(key, webhookId, timestamp, body)}`,
  };
}
