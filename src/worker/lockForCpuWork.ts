/**
 * How long a job's lock must last through the worker's CPU work on its
 * conversation.
 *
 * BullMQ renews locks from a timer on the worker's event loop. Parsing,
 * validating and preparing a conversation is synchronous from the end of
 * decompression to the first summarizer call, and that timer cannot fire in
 * between: for 20 MiB it is seconds of CPU on an idle core and many times
 * that on a busy node, longer than the lock. The lock lapsed, another worker
 * took the job over, and it ran twice.
 *
 * Of the ways out, this is the simplest that keeps crash takeover fast:
 * - one long lock for every job (tried) delays the takeover of every job a
 *   dead worker held by that long, though almost all are small;
 * - cutting the work into pieces with yields between them reaches deep into
 *   the pure core (parser, token counting, planning) for an adapter's need;
 * - a worker thread would copy the conversation across and still leave the
 *   compactor's own work on the main thread.
 * So the lock is extended just before each such stretch (after decompression,
 * and after each summarizer answer, when the compactor resumes its work on
 * the whole conversation) by a budget that grows with the conversation's size
 * and is bounded; BullMQ's renewal timer brings it back to the normal
 * duration at its first tick afterwards, during the next summarizer wait.
 * Only a worker that dies in the middle of a large job's CPU work leaves that
 * job locked for up to its budget; ordinary jobs are handed on as fast as
 * ever, since they are not extended at all (below).
 *
 * Most conversations need no extension at all. BullMQ checks its locks
 * every quarter of their duration and renews those a quarter old, so a lock
 * has a quarter of its duration left even at its worst moment (a new job,
 * first renewed three quarters in). A stretch budgeted at an eighth of the
 * duration or less (100 KB: 0.2 s against 1.25 s at the default 10 s) fits
 * that with the budget's own many-fold margin to spare, while extending
 * anyway costs a Redis script per stretch: two or three per job, every job.
 */
import type { Summarizer } from "../core/summarizer.js";

const MIB = 1024 * 1024;

/**
 * CPU time allowed per MiB of conversation JSON: many times what parsing and
 * preparing takes on an idle core (about 100 ms), for nodes whose CPU is shared.
 */
const BUDGET_MS_PER_MIB = 2_000;

/** No conversation holds its lock longer than this past the normal duration. */
const MAX_BUDGET_MS = 5 * 60_000;

/**
 * The lock duration to set before the CPU work on `jsonBytes` of conversation,
 * or undefined when BullMQ's own renewal already covers that work.
 */
export function lockForCpuWork(jsonBytes: number, lockDurationMs: number): number | undefined {
  const budget = Math.min(MAX_BUDGET_MS, Math.ceil((jsonBytes / MIB) * BUDGET_MS_PER_MIB));
  return budget <= lockDurationMs / 8 ? undefined : lockDurationMs + budget;
}

/**
 * `inner`, with `hold` awaited after each call, answered or failed, before
 * the compactor gets the outcome and goes on with its CPU work.
 */
export function holdLockAfterEachCall(inner: Summarizer, hold: () => Promise<void>): Summarizer {
  return {
    name: inner.name,
    async summarize(request) {
      try {
        return await inner.summarize(request);
      } finally {
        await hold();
      }
    },
  };
}
