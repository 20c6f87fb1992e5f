/**
 * A compaction job as the API shows it, assembled from BullMQ's job (state,
 * timestamps, attempts) and the service's records (outcome, tombstone).
 */
import type { JobState } from "bullmq";
import type { Reason } from "../core/compactor.js";
import { holdsJobData } from "./compactionJob.js";
import type { CompactionJob, CompactionQueue } from "./compactionQueue.js";
import type { FinalOutcome, JobError, ResultStore, StoredResult, Tombstone } from "./resultStore.js";

export type JobStatus = "queued" | "active" | "completed" | "failed" | "cancelled";

export interface JobView {
  readonly id: string;
  readonly status: JobStatus;
  readonly reason: Reason;
  readonly conversationId: string | null;
  /** How many times a worker has started the job. */
  readonly attempts: number;
  readonly createdAt: string;
  readonly startedAt: string | null;
  readonly finishedAt: string | null;
  readonly batchId?: string;
  readonly metadata?: unknown;
  readonly result?: StoredResult;
  readonly error?: JobError;
}

export function isFinished(status: JobStatus): boolean {
  return status === "completed" || status === "failed" || status === "cancelled";
}

/**
 * The job `jobId` of `tenant`; undefined when Redis holds no such job (nor a
 * cancelled job's tombstone), "another tenant's" when it holds someone
 * else's. `settleStalled` settles a job BullMQ failed for stalling that
 * nobody has settled yet (see jobLifecycle.ts).
 */
export async function viewJob(
  queue: CompactionQueue,
  store: ResultStore,
  settleStalled: (job: CompactionJob) => Promise<FinalOutcome>,
  tenant: string,
  jobId: string,
): Promise<JobView | "another tenant's" | undefined> {
  const read = await queue.getJob(jobId);
  // A job whose own record Redis lost is gone, as if its id were unknown too.
  const job = read !== undefined && holdsJobData(read.data) ? read : undefined;
  const tombstone = job === undefined ? await store.getTombstone(jobId) : undefined;
  if (job === undefined && tombstone === undefined) return undefined;
  const view = job !== undefined ? await viewOfJob(queue, job, store, settleStalled, tenant) : await viewOfTombstone(jobId, tombstone!, store, tenant);
  return view ?? "another tenant's";
}

/** {@link viewJob} of a job already read from `queue`; undefined when it is another tenant's. */
export async function viewOfJob(
  queue: CompactionQueue,
  read: CompactionJob,
  store: ResultStore,
  settleStalled: (job: CompactionJob) => Promise<FinalOutcome>,
  tenant: string,
): Promise<JobView | undefined> {
  const jobId = read.id!;
  if (read.data.tenant !== tenant) return undefined;
  const [state, stored] = await Promise.all([read.getState(), store.get(jobId)]);
  // A job read before a worker took it may have finished since: a fast
  // failure (a payload that does not decode) settles between the caller's
  // read of the job and the reads above. Its outcome is then newer than the job read, which would show it
  // finished with 0 attempts and no start: read the job again, for the
  // attempt the outcome came from. A worker records an outcome only after
  // it has taken the job, so a job read after the outcome shows that start.
  const job = stored !== undefined && read.processedOn === undefined ? ((await queue.getJob(jobId)) ?? read) : read;
  // Failed by BullMQ alone (stalled too often) and not settled yet: report it
  // only with its outcome stored, never as a finished job without one.
  const outcome = state === "failed" && stored === undefined ? await settleStalled(job) : stored;
  const status = statusOf(state, outcome);
  const error: JobError | undefined = outcome === undefined || outcome.status === "completed" ? undefined : outcome.error;
  return {
    id: jobId,
    status,
    reason: job.data.reason,
    conversationId: job.data.conversationId ?? null,
    attempts: job.attemptsStarted,
    createdAt: iso(job.timestamp),
    startedAt: job.processedOn === undefined ? null : iso(job.processedOn),
    finishedAt: outcome !== undefined ? iso(outcome.finishedAt) : job.finishedOn === undefined ? null : iso(job.finishedOn),
    ...optional(job.data.batchId, job.data.metadata),
    ...(outcome?.status === "completed" && { result: outcome.result }),
    ...(error !== undefined && { error }),
  };
}

/** A queued job cancelled and removed from its queue, as its tombstone keeps it; undefined when it is another tenant's. */
export async function viewOfTombstone(jobId: string, tombstone: Tombstone, store: ResultStore, tenant: string): Promise<JobView | undefined> {
  if (tombstone.tenant !== tenant) return undefined;
  const outcome = await store.get(jobId);
  return {
    id: jobId,
    status: "cancelled",
    reason: tombstone.reason,
    conversationId: tombstone.conversationId ?? null,
    attempts: tombstone.attempts,
    createdAt: iso(tombstone.createdAt),
    startedAt: tombstone.startedAt === undefined ? null : iso(tombstone.startedAt),
    finishedAt: outcome === undefined ? null : iso(outcome.finishedAt),
    ...optional(tombstone.batchId, tombstone.metadata),
    ...(outcome?.status === "cancelled" && { error: outcome.error }),
  };
}

/**
 * The stored outcome wins over BullMQ's state: a worker records it just
 * before BullMQ moves the job. A failed job always has one by now (viewJob
 * settles a job BullMQ failed alone), so only running and waiting states remain.
 */
function statusOf(state: JobState | "unknown", outcome: FinalOutcome | undefined): JobStatus {
  if (outcome !== undefined) return outcome.status;
  switch (state) {
    case "active":
      return "active";
    case "completed":
      return "completed";
    default:
      return "queued";
  }
}

function optional(batchId: string | undefined, metadata: unknown): Partial<JobView> {
  return { ...(batchId !== undefined && { batchId }), ...(metadata !== undefined && { metadata }) };
}

function iso(epochMs: number): string {
  return new Date(epochMs).toISOString();
}
