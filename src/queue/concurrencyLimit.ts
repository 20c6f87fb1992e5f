/**
 * Runs asynchronous work at most a given number at a time, the rest waiting
 * in the order it came.
 *
 * For work that holds memory from its start to its end whatever it waits on:
 * started all at once, a burst holds all of it together (see payloadCodec.ts).
 */
export type ConcurrencyLimit = <T>(work: () => Promise<T>) => Promise<T>;

export function concurrencyLimit(limit: number): ConcurrencyLimit {
  if (!(Number.isInteger(limit) && limit > 0)) throw new TypeError(`concurrency limit must be a whole number > 0, got ${String(limit)}`);
  let running = 0;
  const waiting: (() => void)[] = [];
  return async (work) => {
    if (running < limit) running++;
    // A finishing task hands its place straight to the next in line, so `running` stays as it is.
    else await new Promise<void>((resolve) => waiting.push(resolve));
    try {
      return await work();
    } finally {
      const next = waiting.shift();
      if (next === undefined) running--;
      else next();
    }
  };
}
