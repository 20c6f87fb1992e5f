/**
 * A configured delay as a Node timer can hold it.
 *
 * Node keeps a timer's delay in 32 bits: given more than 2^31 − 1 ms (24.8
 * days), `setTimeout` fires after 1 ms instead, with nothing but a
 * TimeoutOverflowWarning. A stall timeout set that high would cancel every
 * summary the moment it started. Every timer that takes a delay from
 * settings or configuration goes through here, so a delay too long for a
 * timer waits as long as one can (about 25 days, "never" for any of them)
 * rather than not at all.
 */

/** The longest delay a Node timer keeps: 2^31 − 1 ms. */
const MAX_TIMER_DELAY_MS = 2 ** 31 - 1;

/** `ms` as a timer's delay: at most {@link MAX_TIMER_DELAY_MS}, never negative. */
export function timerDelay(ms: number): number {
  return Math.min(Math.max(ms, 0), MAX_TIMER_DELAY_MS);
}
