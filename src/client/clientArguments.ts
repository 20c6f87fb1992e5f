/**
 * What an agent hands the client, checked before anything is sent.
 *
 * A value a request cannot carry (a line break in a header, a timeout no
 * timer takes, a controller passed for its signal) fails inside `fetch`,
 * where it looks like a connection error: it was retried with backoff and
 * came back seconds later as "failed after 4 attempts". A retry count that
 * is not a number retried for ever, and a wait that never ends held the
 * agent for good. Each is refused here instead, at once, with a TypeError
 * naming the option or argument, as the service names a field.
 */
import { IDEMPOTENCY_KEY_FORM, isIdempotencyKey } from "./idempotencyKey.js";

/**
 * The longest `wait` one client call takes, in seconds (the call asks the
 * API again as often as the API's own limit per request needs): an agent
 * held longer than an hour has stalled, and a wait given in milliseconds by
 * mistake (120000 for two minutes) is well past it. Wait longer by calling
 * `get` again.
 */
const MOST_CALL_WAIT_SECONDS = 3_600;

/** The longest timeout, retry pause or Retry-After a client takes: an hour, in milliseconds. */
const MAX_DELAY_MS = 3_600_000;

/** The most retries of one call: more is a typo, and at the longest pause already days of waiting. */
const MAX_RETRIES = 100;

/**
 * The API's address without a trailing slash. A path is kept (an API behind
 * a gateway at `https://gateway/compactd`); a query or fragment would end up
 * in the middle of every request's URL, and credentials beside the API key.
 */
export function baseUrlOf(value: unknown): string {
  const refuse = (why: string): never => {
    throw new TypeError(`baseUrl: must be ${why}, got ${JSON.stringify(value)}`);
  };
  if (typeof value !== "string") return refuse("an http(s) URL");
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return refuse("an http(s) URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return refuse("an http(s) URL");
  if (value.includes("?") || value.includes("#")) return refuse("an http(s) URL without a query or fragment");
  if (url.username !== "" || url.password !== "") return refuse("an http(s) URL without credentials (the apiKey is sent as a Bearer token)");
  return `${url.origin}${url.pathname.replace(/\/+$/, "")}`;
}

/** A key as the service's COMPACTD_API_KEYS holds one: no spaces, and nothing a header cannot carry. */
export function apiKeyOf(value: unknown): string {
  if (typeof value !== "string" || !/^[\x21-\x7e]+$/.test(value)) {
    throw new TypeError("apiKey: must be a non-empty string of printable ASCII without spaces, as the service's keys are");
  }
  return value;
}

/** The client's whole-number options and their ranges. */
const NUMBER_OPTIONS = {
  maxRetries: { min: 0, max: MAX_RETRIES },
  maxRetryDelayMs: { min: 0, max: MAX_DELAY_MS },
  timeoutMs: { min: 1, max: MAX_DELAY_MS },
} as const;

export function numberOption(name: keyof typeof NUMBER_OPTIONS, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  const { min, max } = NUMBER_OPTIONS[name];
  if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > max) {
    throw new TypeError(`${name}: must be a whole number from ${min} to ${max}, got ${String(value)}`);
  }
  return value;
}

/** A `wait` in seconds: finite, so every call ends. */
export function waitOf(value: unknown): number {
  if (typeof value !== "number" || !(value >= 0 && value <= MOST_CALL_WAIT_SECONDS)) {
    throw new TypeError(`wait: must be a number of seconds from 0 to ${MOST_CALL_WAIT_SECONDS}, got ${String(value)}`);
  }
  return value;
}

/** A job or batch id: sent as a path segment, where `undefined` would be asked for as the id "undefined". */
export function idOf(value: unknown): string {
  if (typeof value !== "string" || value === "") throw new TypeError(`id: must be the job's or batch's id, a non-empty string; got ${String(value)}`);
  return value;
}

export function idempotencyKeyOf(value: unknown): string | undefined {
  if (value !== undefined && !isIdempotencyKey(value)) throw new TypeError(`idempotencyKey: ${IDEMPOTENCY_KEY_FORM}`);
  return value;
}

export function signalOf(value: unknown): AbortSignal | undefined {
  if (value !== undefined && !(value instanceof AbortSignal)) throw new TypeError("signal: must be an AbortSignal (a controller's .signal, not the controller)");
  return value;
}

/**
 * The least a compaction request must be for the client to send it: an
 * object with a list of messages. The service checks the rest and names
 * the field; these two the client itself relies on.
 */
export function checkRequest(request: unknown, field: string): void {
  if (request === null || typeof request !== "object" || Array.isArray(request)) {
    throw new TypeError(`${field === "" ? "request" : field}: must be a compaction request object`);
  }
  if (!Array.isArray((request as { messages?: unknown }).messages)) {
    throw new TypeError(`${field === "" ? "" : `${field}.`}messages: must be an array of messages`);
  }
}

export function checkItems(items: unknown): void {
  if (!Array.isArray(items)) throw new TypeError("items: must be an array of compaction requests");
  items.forEach((item, index) => checkRequest(item, `items[${index}]`));
}
