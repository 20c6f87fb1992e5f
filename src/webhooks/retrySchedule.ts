/**
 * When failed callbacks are tried again, and how often before they are given up.
 *
 * Delays double from `backoffMs` but stop growing at `maxBackoffMs`: plain
 * doubling over a day ends in gaps of half a day, so a receiver back after an
 * outage would wait hours for its callbacks. The attempt count follows from
 * the delays: as many as fit in `maxAgeMs` after the first attempt.
 */

export interface CallbackRetryPolicy {
  readonly backoffMs: number;
  readonly maxBackoffMs: number;
  readonly maxAgeMs: number;
}

/**
 * Retries of many callbacks to one receiver that failed together would
 * otherwise come back together; each delay is shortened by up to this share
 * (shortened, never lengthened, so the last attempt stays within the age).
 */
const JITTER = 0.2;

/** The nominal delay after failed attempt number `attemptsMade` (1-based). */
function nominalDelay(attemptsMade: number, policy: CallbackRetryPolicy): number {
  const doublings = Math.min(Math.max(attemptsMade - 1, 0), 52);
  return Math.min(policy.backoffMs * 2 ** doublings, policy.maxBackoffMs);
}

/** The delay BullMQ waits after failed attempt number `attemptsMade`. */
export function callbackRetryDelay(attemptsMade: number, policy: CallbackRetryPolicy, random: () => number = Math.random): number {
  return Math.round(nominalDelay(attemptsMade, policy) * (1 - JITTER * random()));
}

/** Attempts whose nominal delays add up to no more than `maxAgeMs` (at least one). */
export function callbackAttempts(policy: CallbackRetryPolicy): number {
  let attempts = 1;
  let elapsed = 0;
  // The doubling phase is short (at most 53 steps); once delays reach the cap
  // the rest is a division, however small the delays and long the age.
  while (nominalDelay(attempts, policy) < policy.maxBackoffMs) {
    const delay = nominalDelay(attempts, policy);
    if (elapsed + delay > policy.maxAgeMs) return attempts;
    elapsed += delay;
    attempts++;
  }
  return attempts + Math.floor((policy.maxAgeMs - elapsed) / policy.maxBackoffMs);
}
