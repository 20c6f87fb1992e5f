/**
 * The one owner of a compaction job's life: it submits the job, cancels it,
 * and settles it however it ends and whoever ends it (a worker, the API
 * cancelling a queued job, BullMQ failing a job that stalled too often).
 * Settling records the outcome, counts it in the metrics, announces it to
 * waiting requests, queues the callback and counts the job towards its batch.
 * Routes and the worker only map what it answers onto HTTP or BullMQ.
 *
 * Each step of settling is idempotent, because settling can run twice: a
 * worker that dies after settling but before BullMQ records the end has its
 * job taken over and settled again. The first stored outcome wins, is the one
 * counted (once, by whichever process stored it) and the one re-sent; the
 * callback's webhook id is derived from the job id, so it is delivered once;
 * the batch hash is keyed by job id.
 *
 * The callback itself is sent through an injected {@link NotifyCallback}, so
 * this folder depends on nothing of the webhooks folder, which builds on it.
 */
import { ErrorCodes } from "../client/errorCodes.js";
import type { CompactionCompletedEvent, WebhookEvent } from "../client/webhookEvents.js";
import type { Reason } from "../core/compactor.js";
import { observeLatency } from "../metrics/exemplars.js";
import { UNKNOWN_REASON, type Metrics } from "../metrics/metrics.js";
import type { BatchStore } from "./batchStore.js";
import type { CompactionJobData, CompactionSubmission } from "./compactionJob.js";
import type { CompactionJob, CompactionQueues, SubmitOutcome } from "./compactionQueue.js";
import { viewJob, viewOfJob, viewOfTombstone, type JobView } from "./jobView.js";
import { submitWithPayload, type PayloadStore } from "./payloadStore.js";
import type { FinalOutcome, JobError, ResultStore, Tombstone } from "./resultStore.js";

/**
 * A callback to send: its event, except that a completed compaction's result
 * is not carried. It stays where settling stored it, in the result store
 * under the job's id, and delivery reads it from there: one compressed copy
 * of each result in Redis, not two.
 */
export type CallbackNotice = Exclude<WebhookEvent, CompactionCompletedEvent> | Omit<CompactionCompletedEvent, "result">;

/**
 * Sends `notice` to `url`, or queues it; given by the process that owns the
 * callback queue. `resultJson` is a completed compaction's result as the
 * JSON text just stored, when this settling stored it: a notifier that
 * delivers at once sends it without reading it back (webhooks/firstDelivery.ts).
 */
export type NotifyCallback = (url: string, notice: CallbackNotice, resultJson?: string) => Promise<void>;

/** What settling needs of a job. */
export interface SettledJob {
  readonly id: string;
  readonly data: CompactionJobData;
  /** When it was submitted (epoch ms): its latency is measured from here. */
  readonly timestamp: number;
}

/** A job BullMQ failed by itself for stalling, as BullMQ reports it. */
export interface StalledJob extends SettledJob {
  readonly failedReason?: string;
  readonly finishedOn?: number;
}

/** How a cancellation was carried out. */
export type Cancellation =
  /** The job was waiting: it is out of the queue and settled as cancelled. */
  | "removed"
  /** A worker may hold it: the workers are asked to abort it, and it is flagged so whichever takes it next does not run it. */
  | "signalled";

export interface JobLifecycle {
  /** Adds a job and its payload under `jobId`; `idempotent` says whether the id may already exist (see submitCompaction). */
  submit(jobId: string, submission: CompactionSubmission, idempotent: boolean): Promise<SubmitOutcome>;
  /**
   * A request that needed no job: counted like an outcome, and with the
   * compactions left above the threshold when its context is above it all
   * the same (both kinds of answer leave that agent unable to continue).
   */
  nothingToCompact(reason: Reason, stillAboveThreshold: boolean): void;
  /** Job `jobId` as the API shows it; undefined when unknown or another tenant's. */
  view(tenant: string, jobId: string): Promise<JobView | undefined>;
  /** As {@link view}, telling a job Redis does not hold (undefined) from another tenant's. */
  find(tenant: string, jobId: string): Promise<JobView | "another tenant's" | undefined>;
  /** As {@link view}, of a job already read (an idempotent POST reads its job once). */
  viewOf(tenant: string, job: CompactionJob): Promise<JobView | undefined>;
  /** As {@link view}, of a cancelled queued job's tombstone already read. */
  viewOfCancelled(tenant: string, jobId: string, tombstone: Tombstone): Promise<JobView | undefined>;
  /** Cancels a job that has not finished. */
  cancel(jobId: string): Promise<Cancellation>;
  /**
   * Records `outcome` unless one is recorded, deletes the job's payload (no
   * attempt is left to read it), and notifies; returns the recorded outcome
   * (`outcome` itself when it was the first). A completed outcome yields to
   * a cancellation flagged before it could be stored: the job is settled as
   * cancelled instead, and that outcome returned.
   */
  settle(job: SettledJob, outcome: FinalOutcome): Promise<FinalOutcome>;
  /** Settles a job BullMQ failed for stalling, as {@link settle}. */
  settleStalled(job: StalledJob): Promise<FinalOutcome>;
  /**
   * Counts the failure of a job whose own record Redis lost (see
   * holdsJobData), under {@link UNKNOWN_REASON}, and answers true; false
   * when the job had been settled before its record went (a worker ran it,
   * and Redis lost the job before BullMQ marked it finished): it was counted
   * then. Nothing is stored under its id, because a request repeating the
   * job's Idempotency-Key reuses the id for a new job, which must not find
   * this failure recorded as its own. Nothing names its callback, its batch
   * or its submission time, so none is told or timed.
   */
  failLost(jobId: string): Promise<boolean>;
  /** Sends `batch.completed` for a batch whose jobs have all finished. */
  completeBatch(batchId: string): Promise<void>;
}

export interface JobLifecycleDeps {
  readonly queues: CompactionQueues;
  readonly results: ResultStore;
  readonly payloads: PayloadStore;
  readonly batches: BatchStore;
  readonly metrics: Metrics;
  readonly notify: NotifyCallback;
  /** Asks whichever worker holds a job to abort it (see cancelChannel.ts). */
  readonly broadcastCancel: (jobId: string) => Promise<void>;
}

export function createJobLifecycle({ queues, results, payloads, batches, metrics, notify, broadcastCancel }: JobLifecycleDeps): JobLifecycle {
  const completeBatch = async (batchId: string): Promise<void> => {
    const record = await batches.get(batchId);
    if (record?.callbackUrl === undefined) return;
    const finished = await batches.finished(batchId);
    const items = record.items.map((item) =>
      item.status === "queued" ? { id: item.id, status: finished.get(item.id) ?? ("failed" as const) } : item,
    );
    const counts: Record<string, number> = {};
    for (const item of items) counts[item.status] = (counts[item.status] ?? 0) + 1;
    await notify(record.callbackUrl, {
      type: "batch.completed",
      id: batchId,
      conversationId: null,
      result: { counts, items },
      metadata: record.metadata ?? null,
    });
  };

  const settle = async (job: SettledJob, outcome: FinalOutcome): Promise<FinalOutcome> => {
    const { data } = job;
    // One round trip stores the outcome, deletes the payload and tells waiting requests (ResultStore.settleOnce).
    const stored = await results.settleOnce(job.id, outcome, payloads.keyOf(job.id, data));
    // Cancelled while it ran, before its result was stored: it ends cancelled, and its result is dropped.
    if (stored === "cancelled") return settle(job, { status: "cancelled", finishedAt: Date.now(), error: CANCELLATION });
    const { recorded, resultJson } = stored;
    if (recorded === outcome) countOutcome(metrics, job, outcome);
    if (data.callbackUrl !== undefined) await notify(data.callbackUrl, callbackEventOf(job.id, data, recorded), resultJson);
    if (data.batchId !== undefined && (await batches.markFinished(data.batchId, job.id, recorded.status))) {
      await completeBatch(data.batchId);
    }
    return recorded;
  };

  const failLost = async (jobId: string): Promise<boolean> => {
    if ((await results.get(jobId)) !== undefined) return false;
    metrics.jobsTotal.inc({ reason: UNKNOWN_REASON, outcome: "failed" });
    return true;
  };

  const settleStalled = (job: StalledJob): Promise<FinalOutcome> =>
    settle(job, {
      status: "failed",
      finishedAt: job.finishedOn ?? Date.now(),
      error: { code: ErrorCodes.stalled, message: job.failedReason || "the job stalled too often" },
    });
  const settleRead = (job: CompactionJob): Promise<FinalOutcome> => settleStalled(asSettled(job));

  /**
   * Takes a job that no worker holds (waiting, prioritized, or in retry
   * backoff) out of the queue and settles it as cancelled; false when a worker
   * has it. BullMQ refuses to remove a locked job, so a worker taking the job
   * at this very moment makes the removal fail rather than race it.
   */
  const removeIfQueued = async (jobId: string): Promise<boolean> => {
    const queue = queues.of(jobId);
    const job = await queue.getJob(jobId);
    const state = await queue.getJobState(jobId);
    if (job === undefined || !(state === "waiting" || state === "prioritized" || state === "delayed")) return false;
    if ((await queue.remove(jobId)) !== 1) return false;
    const { data } = job;
    await results.saveTombstone(jobId, {
      tenant: data.tenant,
      reason: data.reason,
      attempts: job.attemptsStarted,
      createdAt: job.timestamp,
      ...(job.processedOn !== undefined && { startedAt: job.processedOn }),
      requestDigest: data.requestDigest,
      ...(data.conversationId !== undefined && { conversationId: data.conversationId }),
      ...(data.metadata !== undefined && { metadata: data.metadata }),
      ...(data.batchId !== undefined && { batchId: data.batchId }),
    });
    // A job in retry backoff has run (and failed) before: it is not said never to have started.
    const message = job.processedOn === undefined ? "the compaction was cancelled before it started" : "the compaction was cancelled while waiting to be retried";
    await settle(asSettled(job), { status: "cancelled", finishedAt: Date.now(), error: { code: ErrorCodes.cancelled, message } });
    return true;
  };

  const find = (tenant: string, jobId: string) => viewJob(queues.of(jobId), results, settleRead, tenant, jobId);

  return {
    submit: (jobId, submission, idempotent) => submitWithPayload(queues.of(jobId), payloads, jobId, submission, idempotent),
    nothingToCompact: (reason, stillAboveThreshold) => {
      metrics.jobsTotal.inc({ reason, outcome: "nothing_to_compact" });
      if (stillAboveThreshold) metrics.stillAboveThresholdTotal.inc({ reason });
    },
    find,
    view: async (tenant, jobId) => {
      const found = await find(tenant, jobId);
      return found === "another tenant's" ? undefined : found;
    },
    viewOf: (tenant, job) => viewOfJob(queues.of(job.id!), job, results, settleRead, tenant),
    viewOfCancelled: (tenant, jobId, tombstone) => viewOfTombstone(jobId, tombstone, results, tenant),
    async cancel(jobId) {
      // The flag first: whichever worker takes or finishes the job from now on sees it.
      await results.markCancelled(jobId);
      if (await removeIfQueued(jobId)) return "removed";
      await broadcastCancel(jobId);
      return "signalled";
    },
    settle,
    settleStalled,
    failLost,
    completeBatch,
  };
}

/** How a job that was cancelled while it ran ended: what its callback and view say. */
export const CANCELLATION: JobError = { code: ErrorCodes.cancelled, message: "the compaction was cancelled" };

/** The callback a settled job's `callbackUrl` hears: the outcome's kind, not the result itself (the callback reads it from the store). */
function callbackEventOf(id: string, data: CompactionJobData, recorded: FinalOutcome): CallbackNotice {
  const conversationId = data.conversationId ?? null;
  const batch = data.batchId === undefined ? {} : { batchId: data.batchId };
  const metadata = data.metadata ?? null;
  return recorded.status === "completed"
    ? { type: "compaction.completed", id, conversationId, ...batch, metadata }
    : { type: "compaction.failed", id, conversationId, ...batch, error: { ...recorded.error, status: recorded.status }, metadata };
}

/** A BullMQ job as settling sees it. */
function asSettled(job: CompactionJob): StalledJob {
  return {
    id: job.id ?? "",
    data: job.data,
    timestamp: job.timestamp,
    ...(job.failedReason !== undefined && { failedReason: job.failedReason }),
    ...(job.finishedOn !== undefined && { finishedOn: job.finishedOn }),
  };
}

/** Counts an outcome in the metrics: once per job, by whoever stored it. */
function countOutcome(metrics: Metrics, job: SettledJob, outcome: FinalOutcome): void {
  const { reason } = job.data;
  // Cancelled jobs have nobody waiting on them; every other outcome ends a wait.
  if (outcome.status !== "cancelled") observeLatency(metrics.jobLatency, { reason }, Math.max(0, outcome.finishedAt - job.timestamp) / 1000);
  if (outcome.status !== "completed") {
    metrics.jobsTotal.inc({ reason, outcome: outcome.status });
    return;
  }
  const { result } = outcome;
  metrics.jobsTotal.inc({ reason, outcome: result.degraded ? "degraded" : "completed" });
  if (result.degraded) metrics.degradedTotal.inc({ reason });
  if (result.stillAboveThreshold) metrics.stillAboveThresholdTotal.inc({ reason });
  metrics.tokensBefore.observe(result.tokensBefore);
  metrics.tokensAfter.observe(result.tokensAfter);
  if (result.omitted > 0) metrics.omittedMessagesTotal.inc(result.omitted);
  if (result.splitTurn) metrics.splitTurnsTotal.inc();
}
