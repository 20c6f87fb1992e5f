/**
 * Waiting for a promise at most so long: a Redis command whose connection
 * queues it while Redis is away, a close step whose peer is gone, a span
 * flush to a collector that is down. Each of those would otherwise wait
 * without end, and each caller decides what a timeout means for it.
 *
 * It lives in core, which imports no other folder, so that every folder can
 * use the one wait (telemetry cannot import from queue, which imports it).
 * The timer is cleared as soon as the promise settles, so a wait that ends
 * early keeps neither the process alive nor a timer pending for the rest.
 */
import { timerDelay } from "./timerDelay.js";

/** What {@link settleWithin} answers when the time ran out before the promise settled. */
export const TIMED_OUT = Symbol("timed out");

/**
 * What `promise` settles to, or {@link TIMED_OUT} if `ms` pass first. A
 * rejection that comes first is thrown; one that comes later is ignored.
 */
export async function settleWithin<T>(promise: Promise<T>, ms: number): Promise<T | typeof TIMED_OUT> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<typeof TIMED_OUT>((resolve) => {
    timer = setTimeout(() => resolve(TIMED_OUT), timerDelay(ms));
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Whether `promise` settles, fulfilled or rejected, within `ms`. */
export async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  return (await settleWithin(promise.then(noop, noop), ms)) !== TIMED_OUT;
}

function noop(): void {}
