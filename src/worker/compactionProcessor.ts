/**
 * What a worker does with one compaction job: read its payload, decompress,
 * parse, compact, store, notify.
 *
 * How each way of ending maps onto BullMQ:
 * - bad input (a payload that does not decode, a conversation the parser
 *   refuses, nothing left to compact): `UnrecoverableError`, no retry; the same
 *   input fails the same way. So does a payload Redis no longer holds
 *   (`payload_missing`): no retry brings it back. A job whose whole record
 *   Redis lost fails the same way; it is counted, but nothing says whose it
 *   was, so nobody is called back.
 * - the result is degraded by a transient cause (the summarizer failed: rate
 *   limit, overload, server error, dropped or stalled stream; see
 *   core/degradation.ts) on an attempt that is not the last: the
 *   degraded result is thrown away and the job thrown back, so BullMQ retries
 *   it after an exponential backoff and the provider gets time to recover. On
 *   the last attempt the degraded result is accepted: a coarse summary that
 *   shrinks the context beats a failed job that leaves the agent stuck.
 * - cancelled (the API's DELETE reached the job's abort signal, or the flag
 *   was seen): settled as cancelled and failed without retry.
 * - the worker is shutting down: the job goes back to the queue untouched,
 *   for another worker.
 */
import { trace } from "@opentelemetry/api";
import { UnrecoverableError, WaitingError, type Job } from "bullmq";
import { createCompactor, type ConversationSource, type Result } from "../core/compactor.js";
import { isTransient } from "../core/degradation.js";
import { CompactionDisabledError, InvalidConversationError, NothingToCompactError } from "../core/errors.js";
import { parseConversation } from "../core/formats/parseConversation.js";
import type { Conversation } from "../core/message.js";
import { OFFLINE_SUMMARIZER, type SummarizerChoice } from "../core/compactor.js";
import { observeLatency, traceExemplar } from "../metrics/exemplars.js";
import type { Metrics } from "../metrics/metrics.js";
import type { Logger } from "../telemetry/logger.js";
import { holdsJobData, type CompactionJobData, type ConversationPayload } from "../queue/compactionJob.js";
import { CANCELLATION, type JobLifecycle } from "../queue/jobLifecycle.js";
import { inflatePayload, type Packed } from "../queue/payloadCodec.js";
import type { PayloadStore } from "../queue/payloadStore.js";
import type { FinalOutcome, JobError, ResultStore } from "../queue/resultStore.js";
import { summarizerMetrics } from "./summarizerMetrics.js";
import { holdLockAfterEachCall, lockForCpuWork } from "./lockForCpuWork.js";
import { traceSummarizerCalls } from "./tracedSummarizer.js";
import { ErrorCodes } from "../client/errorCodes.js";

/** Abort reason of a job whose cancellation was requested through the API. */
export const CANCEL_REASON = "compactd:cancelled";

/** Abort reason of the jobs still running when a worker's shutdown deadline passes. */
export const SHUTDOWN_REASON = "compactd:shutdown";

/** What BullMQ stores as the job's return value; the result itself is in the result store. */
export interface CompactionReturn {
  readonly degraded: boolean;
}

export interface ProcessorDeps {
  readonly results: ResultStore;
  readonly payloads: PayloadStore;
  readonly lifecycle: JobLifecycle;
  readonly metrics: Metrics;
  /** Each job logs under a child with its id, tenant, conversation, reason and attempt. */
  readonly log: Logger;
  /** The summarizer for a job's requested model (the configured one when undefined). */
  readonly summarizerFor: (model: string | undefined) => SummarizerChoice;
  /** The workers' lock duration (`COMPACTD_LOCK_DURATION_MS`). */
  readonly lockDurationMs: number;
}

export type CompactionProcessor = (
  job: Job<CompactionJobData, CompactionReturn>,
  token: string | undefined,
  signal: AbortSignal | undefined,
) => Promise<CompactionReturn>;

/** A summarizer failed transiently and attempts remain: BullMQ retries after its backoff. */
class SummarizerUnavailableError extends Error {
  constructor(reason: string) {
    super(`summarizer failed, retrying the job: ${reason}`);
    this.name = "SummarizerUnavailableError";
  }
}

/** The job ends here for good, without retry: bad input, or cancelled. */
class JobRejected extends Error {
  constructor(
    readonly status: "failed" | "cancelled",
    readonly error: JobError,
  ) {
    super(error.message);
    this.name = "JobRejected";
  }
}

const CANCELLED = new JobRejected("cancelled", CANCELLATION);

export function createCompactionProcessor(deps: ProcessorDeps): CompactionProcessor {
  const { results, payloads, lifecycle, metrics } = deps;

  const run = async (
    job: Job<CompactionJobData>,
    token: string | undefined,
    signal: AbortSignal,
    finalAttempt: boolean,
    log: Logger,
  ): Promise<FinalOutcome> => {
    const { data } = job;
    // The conversation's bytes come with the cancellation check, in the same round trip.
    const { cancelled, recorded, payload } = await results.beforeRunning(idOf(job), payloads.keyOf(idOf(job), data));
    if (cancelled) throw CANCELLED;
    // Taken over from a worker that died after recording the outcome: deliver that one.
    if (recorded !== undefined) return recorded;

    // From decoding to each summarizer call, and from each answer to the
    // next, the event loop is not free, so BullMQ cannot renew the lock: make
    // it last through that work. A failed extension is left to BullMQ's own
    // renewal to report.
    let lockMs: number | undefined;
    const holdLock = async (): Promise<void> => {
      if (token !== undefined && lockMs !== undefined) await job.extendLock(token, lockMs).catch(() => undefined);
    };
    // Read to plan, and again only if an offline summary must stand in for a
    // failed summarizer call: waiting on the summarizer, the job holds
    // neither the parsed conversation nor its compressed bytes (those stay in
    // Redis until the job is settled).
    let prefetched = payload;
    const conversation: ConversationSource = {
      read: async () => {
        // The first read takes the bytes read before running; a second (an offline fallback) reads them again.
        // Missing is null from the prefetch, undefined from the store (PayloadStore.read).
        const packed = prefetched === undefined ? await payloads.read(idOf(job), data) : prefetched;
        prefetched = undefined;
        if (packed === null || packed === undefined) throw MISSING;
        return openPayload(packed, async (jsonBytes) => {
          lockMs = lockForCpuWork(jsonBytes, deps.lockDurationMs);
          await holdLock();
        });
      },
    };
    const chosen = deps.summarizerFor(data.model);
    const summarizer = chosen === OFFLINE_SUMMARIZER ? chosen : holdLockAfterEachCall(traceSummarizerCalls(chosen), holdLock);
    const compactor = createCompactor({ settings: { ...data.settings, contextWindow: data.contextWindow }, summarizer });
    if (compactor === null) {
      throw new JobRejected("failed", { code: ErrorCodes.invalidRequest, message: "must be a positive number of tokens", field: "contextWindow" });
    }

    const stopTimer = metrics.jobDuration.startTimer({ reason: data.reason }, traceExemplar());
    let result: Result;
    try {
      result = await compactor.compactFrom(conversation, {
        reason: data.reason,
        signal,
        ...(data.usageTokens !== undefined && { usageTokens: data.usageTokens }),
        ...(data.instructions !== undefined && { instructions: data.instructions }),
        ...(data.tokenCounts !== undefined && { knownCounts: data.tokenCounts }),
        onSummarizerCall: summarizerMetrics(metrics, log),
      });
    } catch (err) {
      if (signal.aborted) {
        if (signal.reason !== SHUTDOWN_REASON || token === undefined) throw CANCELLED;
        await job.moveToWait(token);
        throw new WaitingError();
      }
      if (err instanceof NothingToCompactError || err instanceof CompactionDisabledError) {
        throw new JobRejected("failed", { code: err.code, message: err.message });
      }
      throw err;
    } finally {
      stopTimer();
    }

    if (!finalAttempt && result.degradation.some(({ cause }) => isTransient(cause))) {
      throw new SummarizerUnavailableError(result.degradedReason ?? "unknown failure");
    }
    // Settling stores it unless the job was cancelled meanwhile (ResultStore.settleOnce).
    return { status: "completed", finishedAt: Date.now(), result: { ...result, replaces: data.replaces } };
  };

  return async (job, token, signal) => {
    // Nothing to run or call back: the job's record is gone (its id answers 410).
    if (!holdsJobData(job.data)) {
      await failLostJob(lifecycle, deps.log, idOf(job));
      throw new UnrecoverableError(RECORD_LOST);
    }
    const finalAttempt = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
    if (job.attemptsStarted <= 1) {
      observeLatency(metrics.queueWait, { reason: job.data.reason }, Math.max(0, Date.now() - job.timestamp) / 1000);
    }
    const log = deps.log.child({
      jobId: idOf(job),
      tenant: job.data.tenant,
      conversationId: job.data.conversationId,
      reason: job.data.reason,
      attempt: job.attemptsMade + 1,
    });
    log.debug("compaction started");
    // BullMQ's `process` span (tracing on) is active: say which compaction it is.
    const span = trace.getActiveSpan();
    span?.setAttributes({ "compactd.job.id": idOf(job), "compactd.tenant": job.data.tenant, "compactd.reason": job.data.reason, "compactd.job.attempt": job.attemptsMade + 1 });
    let outcome: FinalOutcome;
    try {
      outcome = await run(job, token, signal ?? new AbortController().signal, finalAttempt, log);
    } catch (err) {
      if (err instanceof JobRejected) {
        outcome = { status: err.status, finishedAt: Date.now(), error: err.error };
      } else if (finalAttempt && !(err instanceof WaitingError)) {
        // An unexpected error on the last attempt fails the job: settle it so
        // the callback and the batch still hear about it.
        outcome = { status: "failed", finishedAt: Date.now(), error: { code: ErrorCodes.internalError, message: describe(err) } };
      } else {
        if (err instanceof WaitingError) log.info("compaction handed back to the queue at shutdown");
        else log.warn({ errorName: err instanceof Error ? err.name : typeof err }, "compaction attempt failed; the job will be retried");
        throw err;
      }
    }
    const recorded = await lifecycle.settle({ id: idOf(job), data: job.data, timestamp: job.timestamp }, outcome);
    span?.setAttribute("compactd.outcome", recorded.status === "completed" && recorded.result.degraded ? "degraded" : recorded.status);
    // Logged by whoever stored it: this worker, or (a completed outcome that yielded to a cancellation) this worker's settling.
    if (recorded === outcome || (outcome.status === "completed" && recorded.status === "cancelled")) logOutcome(log, job, recorded);
    if (recorded.status === "completed") return { degraded: recorded.result.degraded };
    throw new UnrecoverableError(recorded.status === "cancelled" ? CANCEL_REASON : `${recorded.error.code}: ${recorded.error.message}`);
  };
}

/**
 * Ends a job whose own record Redis lost, however BullMQ hands it over (to
 * the processor, or failed for stalling): its failure is counted and logged,
 * unless the job had been settled before its record went. Nothing in the job
 * says whose it was, so the line has its id and the error only.
 */
export async function failLostJob(lifecycle: JobLifecycle, log: Logger, jobId: string): Promise<void> {
  if (await lifecycle.failLost(jobId)) {
    log.error({ jobId, outcome: "failed", errorCode: ErrorCodes.payloadMissing }, "compaction failed: its job record is no longer in Redis");
  }
}

/** BullMQ's failed reason of a job whose own record Redis lost (no view shows it: its id answers 410). */
const RECORD_LOST = `${ErrorCodes.payloadMissing}: the job's own record is no longer in Redis (Redis lost it); submit the request again`;

const UNDECODABLE = new JobRejected("failed", { code: ErrorCodes.invalidPayload, message: "the stored conversation could not be decoded" });

const MISSING = new JobRejected("failed", {
  code: ErrorCodes.payloadMissing,
  message: "the job's conversation is no longer in Redis (its key expired or Redis lost it); submit the request again",
});

/**
 * The job's conversation, decoded. The decompressed text lives only in here,
 * and the compactor lets go of the parsed conversation once its prompts are
 * built (see "Memory per job in flight" in docs/OPERATIONS.md).
 * `beforeParsing` hears the text's size first. Decompressing comes before it,
 * on the event loop too, but takes a small share of the time parsing and
 * planning the same text take, well inside the quarter of the lock's
 * duration that is always left (lockForCpuWork.ts).
 */
async function openPayload(payload: Packed, beforeParsing: (jsonBytes: number) => Promise<void>): Promise<Conversation> {
  const json = inflate(payload);
  await beforeParsing(json.length);
  return parse(parseJson(json));
}

function inflate(payload: Packed): Buffer {
  try {
    return inflatePayload(payload);
  } catch {
    throw UNDECODABLE;
  }
}

function parseJson(json: Buffer): ConversationPayload {
  try {
    return JSON.parse(json.toString("utf8")) as ConversationPayload;
  } catch {
    throw UNDECODABLE;
  }
}

/**
 * The payload is the body of a request the API accepted, and the API walked
 * that body's nesting depth before anything else read it: the parser is told
 * so, and the walk does not run a second time here.
 */
function parse(payload: ConversationPayload): Conversation {
  try {
    return parseConversation({ messages: payload.messages, system: payload.system }, payload.format, { nestingChecked: true });
  } catch (err) {
    if (!(err instanceof InvalidConversationError)) throw err;
    throw new JobRejected("failed", { code: err.code, message: err.message, field: err.field });
  }
}

/**
 * One line per job at its end: how it ended, never what it contained. A
 * compaction still above the threshold is a warning: its agent will
 * overflow again, and compacting again will not help it.
 */
function logOutcome(log: Logger, job: Job<CompactionJobData>, outcome: FinalOutcome): void {
  const durationMs = Math.max(0, outcome.finishedAt - job.timestamp);
  if (outcome.status === "completed") {
    const { result } = outcome;
    log[result.stillAboveThreshold ? "warn" : "info"](
      {
        outcome: result.degraded ? "degraded" : "completed",
        ...(result.degraded && { degradedCauses: result.degradation.map(({ kind, cause }) => `${kind}:${cause}`), degradedReason: result.degradedReason }),
        tokensBefore: result.tokensBefore,
        tokensAfter: result.tokensAfter,
        stillAboveThreshold: result.stillAboveThreshold,
        durationMs,
      },
      "compaction finished",
    );
  } else {
    const level = outcome.status === "failed" ? "warn" : "info";
    log[level]({ outcome: outcome.status, errorCode: outcome.error.code, durationMs }, "compaction finished");
  }
}

function idOf(job: Job<CompactionJobData>): string {
  return job.id ?? "";
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
