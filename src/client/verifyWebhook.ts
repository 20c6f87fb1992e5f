/**
 * Checking that a webhook really comes from the service, and reading it.
 *
 * The service signs callbacks the Standard Webhooks way: `webhook-signature`
 * is an HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<raw body>` under the
 * shared `whsec_` secret, and a timestamp more than five minutes off is
 * refused so a captured request cannot be replayed later. The check needs
 * the body exactly as it arrived: verify before parsing, never a re-serialized
 * object.
 */
import { Webhook } from "standardwebhooks";
import { WEBHOOK_EVENT_TYPES, type WebhookEvent } from "./webhookEvents.js";

/** Request headers as Node, fetch or a framework hand them over. */
export type WebhookHeaders =
  | Headers
  | Readonly<Record<string, string | readonly string[] | undefined>>;

export class WebhookVerificationError extends Error {
  override readonly name = "WebhookVerificationError";
}

const SIGNATURE_HEADERS = ["webhook-id", "webhook-timestamp", "webhook-signature"] as const;

/**
 * The event `rawBody` carries, once its signature, timestamp and shape check
 * out; throws {@link WebhookVerificationError} saying which check failed
 * otherwise. Deduplicate on the `webhook-id` header: delivery is at least
 * once, and a retried delivery carries the same id.
 */
export function verifyWebhook(rawBody: string | Uint8Array, headers: WebhookHeaders, secret: string): WebhookEvent {
  const signed: Record<string, string> = {};
  for (const name of SIGNATURE_HEADERS) {
    const value = headerValue(headers, name);
    if (value === undefined) throw new WebhookVerificationError(`the ${name} header is missing: this is not a signed compactd webhook`);
    signed[name] = value;
  }
  let payload: unknown;
  try {
    payload = new Webhook(secret).verify(typeof rawBody === "string" ? rawBody : Buffer.from(rawBody), signed);
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    throw new WebhookVerificationError(`webhook ${signed["webhook-id"]} failed verification: ${reason}`, { cause: err });
  }
  return eventOf(payload);
}

function headerValue(headers: WebhookHeaders, name: string): string | undefined {
  if (headers instanceof Headers) return headers.get(name) ?? undefined;
  const key = Object.keys(headers).find((candidate) => candidate.toLowerCase() === name);
  const value = key === undefined ? undefined : headers[key];
  return typeof value === "string" ? value : value?.[0];
}

/** The signature vouches for the sender, not for the shape: a newer service may send a type this client does not know. */
function eventOf(payload: unknown): WebhookEvent {
  const event = payload as Partial<WebhookEvent> | null;
  if (event === null || typeof event !== "object" || typeof event.id !== "string") {
    throw new WebhookVerificationError("the webhook is signed but its body is not a compactd event (no id)");
  }
  if (!WEBHOOK_EVENT_TYPES.includes(event.type as WebhookEvent["type"])) {
    throw new WebhookVerificationError(
      `the webhook is signed but its type ${JSON.stringify(event.type)} is not one this client knows (${WEBHOOK_EVENT_TYPES.join(", ")})`,
    );
  }
  return event as WebhookEvent;
}
