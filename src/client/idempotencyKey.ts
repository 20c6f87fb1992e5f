/**
 * The form of an Idempotency-Key, stated once for the API that refuses any
 * other and the client that sends one: printable ASCII, so it travels in a
 * header as it is, and short enough to be a Redis key.
 */

/** What the API's 400 and the client's TypeError say a key must be. */
export const IDEMPOTENCY_KEY_FORM = "must be 1-255 printable ASCII characters";

export function isIdempotencyKey(value: unknown): value is string {
  return typeof value === "string" && /^[\x21-\x7e][\x20-\x7e]{0,254}$/.test(value);
}
