/**
 * `GET /v1/compactions/:id?wait=N`: holding a request until its job finishes.
 *
 * One QueueEvents stream per API process wakes every waiting request of a job
 * when BullMQ reports it completed, failed or removed; the request then reads
 * the job again and decides whether it is done (a failed attempt that will be
 * retried is not). The stream can miss events while it reconnects, so a
 * waiting request also looks again every second on its own: an event only
 * makes the answer faster, never makes it right.
 */
import { QueueEvents } from "bullmq";
import type { Redis } from "ioredis";
import { COMPACTION_QUEUE } from "../queue/queueNames.js";

/** Longest `wait` a request may ask for, in seconds: below common proxy idle timeouts. */
export const MAX_WAIT_SECONDS = 60;

const RECHECK_MS = 1_000;

export interface JobWaiter {
  /** Resolves on the job's next event, after `ms`, after a recheck period, or when `signal` aborts. */
  nextChange(jobId: string, ms: number, signal: AbortSignal): Promise<void>;
  close(): Promise<void>;
}

/** `connection` is dedicated to the events stream (it blocks on XREAD). */
export function createJobWaiter(connection: Redis, prefix: string, onError: (error: Error) => void): JobWaiter {
  const events = new QueueEvents(COMPACTION_QUEUE, { connection, prefix });
  const waiting = new Map<string, Set<() => void>>();
  const wake = ({ jobId }: { jobId: string }): void => {
    for (const resolve of waiting.get(jobId) ?? []) resolve();
  };
  events.on("completed", wake);
  events.on("failed", wake);
  events.on("removed", wake);
  // A lost connection is retried by ioredis; the periodic recheck covers the gap.
  events.on("error", onError);

  return {
    nextChange(jobId, ms, signal) {
      return new Promise<void>((resolve) => {
        const listeners = waiting.get(jobId) ?? new Set();
        waiting.set(jobId, listeners);
        const done = (): void => {
          clearTimeout(timer);
          signal.removeEventListener("abort", done);
          listeners.delete(done);
          if (listeners.size === 0) waiting.delete(jobId);
          resolve();
        };
        const timer = setTimeout(done, Math.min(ms, RECHECK_MS));
        listeners.add(done);
        if (signal.aborted) done();
        else signal.addEventListener("abort", done, { once: true });
      });
    },
    async close() {
      for (const listeners of waiting.values()) for (const resolve of listeners) resolve();
      await events.close();
    },
  };
}
