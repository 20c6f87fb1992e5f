/**
 * `GET /v1/compactions/:id?wait=N`: holding a request until its job finishes.
 *
 * A waiting request reads its job when it is told the job settled (the
 * settlement broadcast, settledChannel.ts), not on a timer, so a thousand idle
 * waiters cost Redis nothing. One subscriber connection per API process
 * serves them all. The number of waiters per process is capped
 * (`COMPACTD_MAX_WAITERS`): beyond it a request is answered at once with the
 * job as it is, which a client treats like any wait that ran out.
 */
import type { SettledListener } from "../queue/settledChannel.js";

/** Longest `wait` a request may ask for, in seconds: below common proxy idle timeouts. */
export const MAX_WAIT_SECONDS = 60;

/** One waiting request: set when its job may have changed since its last read. */
interface Waiter {
  stale: boolean;
  wake: () => void;
}

export interface JobWaiters {
  /** What the settlement subscription calls. */
  readonly listener: SettledListener;
  /** Requests waiting now. */
  waiting(): number;
  /**
   * Reads job `jobId` with `read` each time it may have changed, until `done`
   * holds, `deadline` (epoch ms) passes or `signal` aborts (the client hung
   * up); returns the last read. At the cap, returns `initial` at once.
   */
  waitFor<T>(jobId: string, initial: T, read: () => Promise<T>, done: (value: T) => boolean, deadline: number, signal: AbortSignal): Promise<T>;
}

export function createJobWaiters(maxWaiters: number): JobWaiters {
  const byJob = new Map<string, Set<Waiter>>();
  let count = 0;

  const markStale = (waiters: Iterable<Waiter>): void => {
    for (const waiter of waiters) {
      waiter.stale = true;
      waiter.wake();
    }
  };

  return {
    waiting: () => count,
    listener: {
      onSettled: (jobId) => markStale(byJob.get(jobId) ?? []),
      onResubscribed: () => {
        for (const waiters of byJob.values()) markStale(waiters);
      },
    },
    async waitFor(jobId, initial, read, done, deadline, signal) {
      if (done(initial) || Date.now() >= deadline || signal.aborted || count >= maxWaiters) return initial;
      // Registered before reading again, so a settlement between the caller's
      // read and this registration is not missed: the read below sees it.
      const waiter: Waiter = { stale: true, wake: () => undefined };
      const waiters = byJob.get(jobId) ?? new Set<Waiter>();
      byJob.set(jobId, waiters.add(waiter));
      count += 1;
      try {
        let value = initial;
        while (!signal.aborted && Date.now() < deadline) {
          if (waiter.stale) {
            waiter.stale = false;
            value = await read();
            if (done(value)) break;
            continue;
          }
          await new Promise<void>((resolve) => {
            const timer = setTimeout(finish, deadline - Date.now());
            signal.addEventListener("abort", finish, { once: true });
            waiter.wake = finish;
            function finish(): void {
              clearTimeout(timer);
              signal.removeEventListener("abort", finish);
              waiter.wake = () => undefined;
              resolve();
            }
          });
        }
        return value;
      } finally {
        count -= 1;
        waiters.delete(waiter);
        if (waiters.size === 0) byJob.delete(jobId);
      }
    },
  };
}
