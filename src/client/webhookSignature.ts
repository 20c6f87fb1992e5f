/**
 * The Standard Webhooks signature, as the service makes it (src/webhooks/
 * signing.ts) and an agent checks it (verifyWebhook.ts): one definition of
 * the key a `whsec_` secret holds and of what is signed, so the two cannot
 * drift apart. Node's HMAC, not the `standardwebhooks` package's JavaScript
 * SHA-256, which the tests hold both to.
 */
import { createHmac } from "node:crypto";

/** The prefix of a Standard Webhooks secret; the rest is the HMAC key, base64-encoded. */
export const SECRET_PREFIX = "whsec_";

/** Strict base64 with padding: Node's decoder would skip what is not base64, and sign with another key than the receiver holds. */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * The HMAC key of `secret`: what follows `whsec_` (or the whole secret
 * without it, as the package takes one), decoded strictly; undefined when
 * that is not base64 or decodes to nothing.
 */
export function webhookKey(secret: string): Buffer | undefined {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  if (!BASE64.test(encoded)) return undefined;
  const key = Buffer.from(encoded, "base64");
  return key.length === 0 ? undefined : key;
}

/**
 * The signature of one delivery: base64 HMAC-SHA256 of
 * `<webhook-id>.<timestamp>.<body>` (`webhook-signature` carries it after
 * `v1,`). A body given as text is signed as its UTF-8 bytes, so text and
 * those bytes sign alike.
 */
export function webhookSignature(key: Uint8Array, webhookId: string, timestamp: number, body: string | Uint8Array): string {
  return createHmac("sha256", key).update(`${webhookId}.${timestamp}.`, "utf8").update(body).digest("base64");
}
