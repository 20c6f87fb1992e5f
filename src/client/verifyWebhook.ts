/**
 * Checking that a webhook really comes from the service, and reading it.
 *
 * The service signs callbacks the Standard Webhooks way: `webhook-signature`
 * is an HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<raw body>` under the
 * shared `whsec_` secret, and a timestamp more than five minutes off is
 * refused so a captured request cannot be replayed later. The check needs
 * the body exactly as it arrived: verify before parsing, never a re-serialized
 * object.
 *
 * The check is the `standardwebhooks` package's, made with Node's own HMAC:
 * the package hashes in JavaScript, which took a receiver 1.67 ms of CPU to
 * verify and read a 104 KB callback against 0.43 here (`npm run
 * bench:client`), and results run to hundreds of KB. A property test holds
 * every verdict, and every reason for a refusal, to the package's
 * (test/client/verifyWebhook.test.ts).
 */
import { timingSafeEqual } from "node:crypto";
import { webhookKey, webhookSignature } from "./webhookSignature.js";
import { WEBHOOK_EVENT_TYPES, type WebhookEvent } from "./webhookEvents.js";

/**
 * Request headers as Node, fetch or a framework hand them over: an object by
 * name (Node's `headers`, or `headersDistinct` with every line in a list), or
 * anything with a `get` by name (the runtime's `Headers`, another fetch
 * implementation's, a `Map`).
 */
export type WebhookHeaders =
  | { get(name: string): string | null | undefined }
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
export function verifyWebhook(rawBody: string | Uint8Array | ArrayBuffer, headers: WebhookHeaders, secret: string): WebhookEvent {
  // The receiver's own mistakes first, as TypeErrors: they are not a forged or mangled delivery.
  const key = keyOf(secret);
  const body = bodyText(rawBody);
  const signed: Record<string, string> = {};
  for (const name of SIGNATURE_HEADERS) {
    const value = headerValue(headers, name);
    if (value === undefined) throw new WebhookVerificationError(`the ${name} header is missing: this is not a signed compactd webhook`);
    signed[name] = value;
  }
  let payload: unknown;
  try {
    payload = verifiedPayload(body, signed, key);
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    const hint = reason === NO_MATCHING_SIGNATURE ? NO_MATCH_HINT : "";
    throw new WebhookVerificationError(`webhook ${signed["webhook-id"]} failed verification: ${reason}${hint}`, { cause: err });
  }
  return eventOf(payload);
}

/** The package's reason when no signature matches, which this check gives too. */
const NO_MATCHING_SIGNATURE = "No matching signature found";

/** What a receiver can do about it: the two causes on its own side. */
const NO_MATCH_HINT =
  "; if it came from compactd, check that the secret is the service's COMPACTD_WEBHOOK_SECRET and that the body is passed exactly as received, not parsed and serialized again";

/**
 * The body as text. A parsed object is refused with what to do instead: a
 * framework's JSON parser has read the body before the handler, and what it
 * gives back is not the bytes that were signed.
 */
function bodyText(rawBody: unknown): string {
  if (typeof rawBody === "string") return rawBody;
  if (rawBody instanceof Uint8Array) return Buffer.from(rawBody.buffer, rawBody.byteOffset, rawBody.byteLength).toString("utf8");
  if (rawBody instanceof ArrayBuffer) return Buffer.from(rawBody).toString("utf8");
  const got = rawBody === null ? "null" : typeof rawBody === "object" ? "an object" : typeof rawBody;
  throw new TypeError(
    `rawBody: must be the body exactly as received, as a string or bytes, got ${got}; if a JSON body parser has read it already, ` +
      "verify the raw body instead (Express: express.raw({ type: \"application/json\" }); Fastify: a content-type parser with parseAs: \"string\"; " +
      "fetch: await request.text()) and parse the event verifyWebhook returns",
  );
}

/** How far a delivery's timestamp may be from now, either way. */
const TOLERANCE_SECONDS = 5 * 60;

function keyOf(secret: string): Buffer {
  if (typeof secret !== "string") throw new TypeError("secret: must be the service's whsec_ secret, as a string");
  const key = webhookKey(secret);
  if (key === undefined) throw new TypeError("secret: must be whsec_ followed by base64, not empty");
  return key;
}

/**
 * The body's JSON (undefined for an empty body) once a `v1` signature in
 * `webhook-signature` (a space-separated list) matches; throws with the
 * package's own reasons otherwise. The signed timestamp is the header read
 * as an integer, as the package reads it.
 */
function verifiedPayload(body: string, headers: Readonly<Record<string, string>>, key: Buffer): unknown {
  if (SIGNATURE_HEADERS.some((name) => headers[name] === "")) throw new Error("Missing required headers");
  const timestamp = Number.parseInt(headers["webhook-timestamp"]!, 10);
  if (Number.isNaN(timestamp)) throw new Error("Invalid Signature Headers");
  const now = Math.floor(Date.now() / 1000);
  if (now - timestamp > TOLERANCE_SECONDS) throw new Error("Message timestamp too old");
  if (timestamp > now + TOLERANCE_SECONDS) throw new Error("Message timestamp too new");
  const expected = Buffer.from(webhookSignature(key, headers["webhook-id"]!, timestamp, body), "utf8");
  for (const versioned of headers["webhook-signature"]!.split(" ")) {
    const [version, signature] = versioned.split(",");
    if (version !== "v1" || signature === undefined) continue;
    const given = Buffer.from(signature, "utf8");
    if (given.length === expected.length && timingSafeEqual(given, expected)) return body === "" ? undefined : JSON.parse(body);
  }
  throw new Error(NO_MATCHING_SIGNATURE);
}

/**
 * One header's value. Several lines of it (`headersDistinct`, a framework's
 * lists) are joined as Node joins them into `headers`, so a signature on any
 * line counts, as it does in one line with several signatures.
 */
function headerValue(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof headers.get === "function") return (headers as { get(name: string): string | null | undefined }).get(name) ?? undefined;
  const byName = headers as Readonly<Record<string, string | readonly string[] | undefined>>;
  const key = Object.keys(byName).find((candidate) => candidate.toLowerCase() === name);
  const value = key === undefined ? undefined : byName[key];
  if (value === undefined || typeof value === "string") return value;
  return value.length === 0 ? undefined : value.join(", ");
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
