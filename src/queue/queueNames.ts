/**
 * Names of the queues and of the service's own Redis keys.
 *
 * Everything lives under one prefix (`COMPACTD_QUEUE_PREFIX`, default
 * `{compactd}`). BullMQ puts its keys at `<prefix>:<queue>:…`; the service's
 * own records sit at `<prefix>:store:…`. With a hash tag as the prefix, Redis
 * Cluster places all of them in one slot, which BullMQ's scripts need and
 * which lets one deployment share a Redis with others (or tests share one
 * Redis with each other) by changing nothing but the prefix.
 *
 * With `COMPACTD_QUEUE_SHARDS` above 1 the compaction queue is split in
 * shards, each under its own hash tag (see {@link shardPrefix}), so a Redis
 * Cluster can put them on different masters. A job's own records (result,
 * cancellation flag, tombstone, queued payload) live beside it under its
 * shard's prefix, so in its slot, found from the shard number its id
 * carries; everything else (batches, the callback queue, the cancel channel,
 * leases) stays under the prefix itself.
 */
import { shardOfJobId } from "./compactionJob.js";

/** Compaction jobs. */
export const COMPACTION_QUEUE = "compactions";

/** Callback deliveries, apart so a slow receiver never holds a compaction worker. */
export const CALLBACK_QUEUE = "callbacks";

/**
 * The prefix of shard `shard`: shard 0 is the prefix itself (so a deployment
 * that grows from one shard keeps its queue), shard n appends `-n` inside the
 * hash tag (`{compactd}` → `{compactd-2}`), or to the prefix when it has none.
 */
export function shardPrefix(prefix: string, shard: number): string {
  if (shard === 0) return prefix;
  const close = prefix.indexOf("}");
  return close < 0 ? `${prefix}-${shard}` : `${prefix.slice(0, close)}-${shard}${prefix.slice(close)}`;
}

export interface ServiceKeys {
  /**
   * A queued job's compressed conversation, as raw bytes (payloadStore.ts).
   * Named by the submission, not the job id: an idempotent replay adds
   * nothing to the job it replays, and must not overwrite its payload.
   */
  payload(jobId: string, submissionId: string): string;
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
  /** Pub/sub channel on which a job's settlement is announced to the API's waiting requests. */
  readonly settledChannel: string;
  /** Every key under the prefix (shard 0 and the deployment's own), for SCAN. */
  readonly pattern: string;
}

export function serviceKeys(prefix: string): ServiceKeys {
  const store = `${prefix}:store`;
  const jobStore = (jobId: string): string => `${shardPrefix(prefix, shardOfJobId(jobId))}:store`;
  return {
    payload: (jobId, submissionId) => `${jobStore(jobId)}:payload:${submissionId}`,
    result: (jobId) => `${jobStore(jobId)}:result:${jobId}`,
    cancelled: (jobId) => `${jobStore(jobId)}:cancelled:${jobId}`,
    tombstone: (jobId) => `${jobStore(jobId)}:tombstone:${jobId}`,
    batch: (batchId) => `${store}:batch:${batchId}`,
    batchFinished: (batchId) => `${store}:batch:${batchId}:finished`,
    cancelChannel: `${prefix}:cancel`,
    settledChannel: `${prefix}:settled`,
    pattern: `${prefix}:*`,
  };
}
