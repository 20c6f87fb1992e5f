/**
 * Adding compaction jobs: idempotency, the one-in-flight rule, priority and
 * the backlog count that backpressure is decided on.
 *
 * Both rules ride on BullMQ's own atomic add script rather than on keys the
 * service sets beside it, so no crash between two Redis calls can leave a
 * lock without a job or a job without its lock:
 * - an idempotency key is turned into the job id (an add with an existing id
 *   creates nothing);
 * - a conversation's in-flight lock is BullMQ's deduplication key, set in the
 *   same script that stores the job, deleted by the script that moves the job
 *   to completed or failed and by job removal (so cancel releases it too), and
 *   discarded on the next add if its job has vanished (the safety net for a
 *   job lost to a Redis outage).
 */
import { Queue, type Job } from "bullmq";
import { queueTelemetry } from "../telemetry/tracing.js";
import type { RedisClient } from "./redisConnection.js";
import { COMPACTION_JOB_NAME, inFlightId, PRIORITY_BY_REASON, shardOfJobId, type CompactionJobData } from "./compactionJob.js";
import { COMPACTION_QUEUE, shardPrefix } from "./queueNames.js";

export type CompactionQueue = Queue<CompactionJobData>;
export type CompactionJob = Job<CompactionJobData>;

export interface CompactionQueueOptions {
  readonly prefix: string;
  readonly attempts: number;
  /** First retry delay; BullMQ doubles it per attempt. */
  readonly backoffMs: number;
  /** Finished jobs are kept this long so their status and result can be read. */
  readonly retentionSeconds: number;
}

/**
 * BullMQ's Redis version check, left to the workers. A queue runs it once,
 * as it starts, and keeps its outcome for good: on the API's connection,
 * whose commands time out (COMPACTD_REDIS_COMMAND_TIMEOUT_MS), a Redis slow
 * to answer that one INFO left the queue failing every add with the same
 * timeout until the process restarted, while /readyz, probing Redis itself,
 * said ready. Workers check the version on connections without a timeout.
 */
export const WITHOUT_VERSION_CHECK = { skipVersionCheck: true } as const;

export function createCompactionQueue(connection: RedisClient, options: CompactionQueueOptions): CompactionQueue {
  return new Queue<CompactionJobData>(COMPACTION_QUEUE, {
    connection,
    prefix: options.prefix,
    ...queueTelemetry(),
    ...WITHOUT_VERSION_CHECK,
    defaultJobOptions: {
      attempts: options.attempts,
      backoff: { type: "exponential", delay: options.backoffMs },
      removeOnComplete: { age: options.retentionSeconds },
      removeOnFail: { age: options.retentionSeconds },
    },
  });
}

/**
 * The compaction queue's shards (one unless `COMPACTD_QUEUE_SHARDS` says
 * more), each a BullMQ queue under its own hash tag.
 */
export interface CompactionQueues {
  readonly shards: readonly CompactionQueue[];
  /** Whether `jobId` names a shard this deployment runs (an id from elsewhere may not). */
  holds(jobId: string): boolean;
  /** The queue of the shard `jobId` names; only for ids that {@link holds} accepts. */
  of(jobId: string): CompactionQueue;
  close(): Promise<void>;
}

export function createCompactionQueues(connection: RedisClient, shards: number, options: CompactionQueueOptions): CompactionQueues {
  const queues = Array.from({ length: shards }, (_, shard) =>
    createCompactionQueue(connection, { ...options, prefix: shardPrefix(options.prefix, shard) }),
  );
  const holds = (jobId: string): boolean => shardOfJobId(jobId) < queues.length;
  return {
    shards: queues,
    holds,
    of(jobId) {
      if (!holds(jobId)) throw new Error(`job ${jobId} is in shard ${shardOfJobId(jobId)}; this deployment runs ${queues.length}`);
      return queues[shardOfJobId(jobId)]!;
    },
    async close() {
      await Promise.allSettled(queues.map((queue) => queue.close()));
    },
  };
}

export type SubmitOutcome =
  /** A new job was queued. */
  | { readonly kind: "created"; readonly job: CompactionJob }
  /** The idempotency key already named this job; nothing was added. */
  | { readonly kind: "replayed"; readonly job: CompactionJob }
  /** The idempotency key already named a job for a different request. */
  | { readonly kind: "keyReused"; readonly jobId: string }
  /** Another compaction of this conversation is queued or running. */
  | { readonly kind: "inFlight"; readonly jobId: string };

/**
 * Adds a job under `jobId` (derived from the idempotency key when there is
 * one). `idempotent` says whether the id may already exist.
 */
export async function submitCompaction(
  queue: CompactionQueue,
  jobId: string,
  data: CompactionJobData,
  idempotent: boolean,
): Promise<SubmitOutcome> {
  const added = await queue.add(COMPACTION_JOB_NAME, data, {
    jobId,
    priority: PRIORITY_BY_REASON[data.reason],
    ...(data.conversationId === undefined ? {} : { deduplication: { id: inFlightId(data.tenant, data.conversationId) } }),
  });
  // BullMQ checks the job id before the deduplication key, so a different id
  // back means the conversation's in-flight job, never an idempotent replay.
  if (added.id !== jobId) return { kind: "inFlight", jobId: added.id ?? "" };
  if (!idempotent) return { kind: "created", job: added };
  // For an existing id BullMQ returns a Job holding the data we passed, not
  // what is stored: read the stored one to see whose it is.
  const stored = await queue.getJob(jobId);
  if (stored === undefined || stored.data.submissionId === data.submissionId) return { kind: "created", job: stored ?? added };
  if (stored.data.requestDigest !== data.requestDigest) return { kind: "keyReused", jobId };
  return { kind: "replayed", job: stored };
}

/**
 * Jobs waiting for a worker: the plain wait list, the prioritized sorted set
 * (where every job of this service lives, see PRIORITY_BY_REASON) and jobs in
 * retry backoff, over every shard. Active jobs are not backlog: worker
 * concurrency bounds them.
 */
export async function backlogOf(shards: readonly CompactionQueue[]): Promise<number> {
  const counts = await Promise.all(shards.map((queue) => queue.getJobCountByTypes("waiting", "prioritized", "delayed")));
  return counts.reduce((sum, count) => sum + count, 0);
}
