/**
 * `GET /v1/compactions/:id?wait=N`: holding a request until its job finishes.
 *
 * The request reads the job again every half second until it is finished or
 * the wait is over. Polling rather than BullMQ's QueueEvents stream: a
 * summarization takes seconds, so half a second of extra latency is noise,
 * while an events stream needs a blocking connection per API process that
 * BullMQ cannot close while Redis is unreachable (the process would never
 * exit during an outage), and it misses events across reconnects anyway.
 */

/** Longest `wait` a request may ask for, in seconds: below common proxy idle timeouts. */
export const MAX_WAIT_SECONDS = 60;

const RECHECK_MS = 500;

/**
 * Reads with `read` until `done` holds, `deadline` (epoch ms) passes or
 * `signal` aborts (the client hung up); returns the last read.
 */
export async function waitFor<T>(
  initial: T,
  read: () => Promise<T>,
  done: (value: T) => boolean,
  deadline: number,
  signal: AbortSignal,
): Promise<T> {
  let value = initial;
  while (!done(value) && Date.now() < deadline && !signal.aborted) {
    await pause(Math.min(RECHECK_MS, deadline - Date.now()), signal);
    if (!signal.aborted) value = await read();
  }
  return value;
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}
