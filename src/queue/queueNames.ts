/**
 * Names of the queues and of the service's own Redis keys.
 *
 * Everything lives under one prefix (`COMPACTD_QUEUE_PREFIX`, default
 * `{compactd}`). BullMQ puts its keys at `<prefix>:<queue>:…`; the service's
 * own records sit at `<prefix>:store:…`. With a hash tag as the prefix, Redis
 * Cluster places all of them in one slot, which BullMQ's scripts need and
 * which lets one deployment share a Redis with others (or tests share one
 * Redis with each other) by changing nothing but the prefix.
 */

/** Compaction jobs. */
export const COMPACTION_QUEUE = "compactions";

/** Callback deliveries, apart so a slow receiver never holds a compaction worker. */
export const CALLBACK_QUEUE = "callbacks";

export interface ServiceKeys {
  /** How a job ended: its result or its error (compressed), kept for the result retention. */
  result(jobId: string): string;
  /** Set when a job is cancelled; workers check it before and after compacting. */
  cancelled(jobId: string): string;
  /** What is left of a queued job that was cancelled and removed from the queue. */
  tombstone(jobId: string): string;
  /** A batch's record. */
  batch(batchId: string): string;
  /** A batch's finished jobs and how each ended. */
  batchFinished(batchId: string): string;
  /** Pub/sub channel on which the API asks whichever worker holds a job to abort it. */
  readonly cancelChannel: string;
  /** Every key of this deployment, for SCAN (tests clean up with it). */
  readonly pattern: string;
}

export function serviceKeys(prefix: string): ServiceKeys {
  const store = `${prefix}:store`;
  return {
    result: (jobId) => `${store}:result:${jobId}`,
    cancelled: (jobId) => `${store}:cancelled:${jobId}`,
    tombstone: (jobId) => `${store}:tombstone:${jobId}`,
    batch: (batchId) => `${store}:batch:${batchId}`,
    batchFinished: (batchId) => `${store}:batch:${batchId}:finished`,
    cancelChannel: `${prefix}:cancel`,
    pattern: `${prefix}:*`,
  };
}
