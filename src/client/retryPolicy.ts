/**
 * When the client tries a call again.
 *
 * Only failures that say "not now" are retried: the connection failed, or the
 * service answered 503 (Redis out of reach, shutting down) or 429 (backlog
 * full). Every call the client makes is safe to repeat (reads, cancels, and
 * submissions carrying an Idempotency-Key), so a retry never queues a second
 * compaction. The service's `Retry-After` is honoured as given; one longer
 * than the client is willing to wait ends the retries at once, so an agent is
 * told "later" instead of being held for minutes inside one call.
 */

export interface RetryPolicy {
  /** Retries after the first attempt. */
  readonly maxRetries: number;
  /** The longest pause before a retry, and the longest `Retry-After` honoured. */
  readonly maxDelayMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { maxRetries: 3, maxDelayMs: 30_000 };

/** Statuses that mean "try again later" rather than "this request is wrong". */
export const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([429, 503]);

/** First pause when the service did not say how long to wait; doubled on each retry. */
const BASE_DELAY_MS = 250;

/**
 * The pause before retry `retry` (0 for the first retry), or undefined when
 * the call should fail now. `retryAfter` is the failed response's header,
 * null after a connection error.
 */
export function retryDelayMs(policy: RetryPolicy, retry: number, retryAfter: string | null, now = Date.now()): number | undefined {
  if (retry >= policy.maxRetries) return undefined;
  const asked = retryAfter === null ? undefined : parseRetryAfter(retryAfter, now);
  if (asked !== undefined) return asked <= policy.maxDelayMs ? asked : undefined;
  // Jittered, so clients refused together do not come back together.
  const backoff = Math.min(BASE_DELAY_MS * 2 ** retry, policy.maxDelayMs);
  return backoff / 2 + Math.random() * (backoff / 2);
}

/**
 * The forms of an HTTP-date (RFC 9110, 5.6.7): IMF-fixdate, and the obsolete
 * RFC 850 and asctime forms a recipient must still read. Only these are
 * handed to `Date.parse`, which reads almost anything as a date ("1.5" as
 * 5 January 2001, two headers joined as "5, 5" as 5 May 2001), and such a
 * date, long past, would mean "retry now".
 */
const IMF_FIXDATE = /^[a-z]{3}, \d{2} [a-z]{3} \d{4} \d{2}:\d{2}:\d{2} GMT$/i;
const RFC_850_DATE = /^[a-z]{6,9}, \d{2}-[a-z]{3}-\d{2} \d{2}:\d{2}:\d{2} GMT$/i;
const ASCTIME_DATE = /^[a-z]{3} [a-z]{3} [ \d]\d \d{2}:\d{2}:\d{2} \d{4}$/i;

/** `Retry-After` in milliseconds: delay-seconds or an HTTP-date; undefined when it is neither. */
export function parseRetryAfter(value: string, now = Date.now()): number | undefined {
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  let date = Number.NaN;
  if (IMF_FIXDATE.test(trimmed) || RFC_850_DATE.test(trimmed)) date = Date.parse(trimmed);
  // asctime names no zone, and Date.parse would read it in the local one; HTTP-dates are GMT.
  else if (ASCTIME_DATE.test(trimmed)) date = Date.parse(`${trimmed} GMT`);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
