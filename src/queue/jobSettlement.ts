/**
 * The last step of every job, whichever way it ends and whoever ends it (a
 * worker, or the API cancelling a queued job): record the outcome, queue the
 * callback, count the job towards its batch.
 *
 * Each step is idempotent, because a step can run twice: a worker that dies
 * after settling but before BullMQ records the end has its job taken over and
 * settled again. The first stored outcome wins and is the one re-sent; the
 * callback's webhook id is derived from the job id, so the callback queue
 * delivers it once; the batch hash is keyed by job id.
 */
import { enqueueCallback, type CallbackQueue } from "../webhooks/callbackQueue.js";
import type { CompactionJobData } from "./compactionJob.js";
import type { BatchStore } from "./batchStore.js";
import type { FinalOutcome, FinalStatus, JobError, ResultStore, StoredResult } from "./resultStore.js";

/** The events this service sends, in the shape receivers get them. */
export type CallbackEvent =
  | {
      readonly type: "compaction.completed";
      readonly id: string;
      readonly conversationId: string | null;
      readonly batchId?: string;
      readonly result: StoredResult;
      readonly metadata: unknown;
    }
  | {
      readonly type: "compaction.failed";
      readonly id: string;
      readonly conversationId: string | null;
      readonly batchId?: string;
      readonly error: JobError & { readonly status: FinalStatus };
      readonly metadata: unknown;
    }
  | {
      readonly type: "batch.completed";
      readonly id: string;
      readonly conversationId: null;
      readonly result: BatchSummary;
      readonly metadata: unknown;
    };

/** What the `batch.completed` callback reports. */
export interface BatchSummary {
  readonly counts: Readonly<Record<string, number>>;
  readonly items: readonly { readonly id?: string; readonly status: string; readonly inFlightId?: string }[];
}

/**
 * The outcome of a job BullMQ failed by itself, for stalling more than
 * COMPACTD_MAX_STALLED_COUNT times: no processor ran to settle it, so the
 * worker that saw it fail settles it, or a reader that comes first (the
 * outcome is stored once; whoever comes second gets the stored one).
 */
export function stalledOutcome(job: { readonly failedReason?: string; readonly finishedOn?: number }): FinalOutcome {
  return {
    status: "failed",
    finishedAt: job.finishedOn ?? Date.now(),
    error: { code: "stalled", message: job.failedReason || "the job stalled too often" },
  };
}

export interface SettledJob {
  readonly id: string;
  readonly data: CompactionJobData;
}

export interface JobSettlement {
  /** Records `outcome` (unless one is recorded) and notifies; returns the recorded outcome. */
  settle(job: SettledJob, outcome: FinalOutcome): Promise<FinalOutcome>;
  /** Sends `batch.completed` for a batch whose jobs have all finished. */
  completeBatch(batchId: string): Promise<void>;
}

/**
 * `announce` tells waiting API requests that a job has an outcome (see
 * settledChannel.ts); it runs once the outcome is stored.
 */
export function createJobSettlement(
  results: ResultStore,
  batches: BatchStore,
  callbacks: CallbackQueue,
  announce: (jobId: string) => Promise<void>,
): JobSettlement {
  const notify = async (url: string, event: CallbackEvent): Promise<void> => {
    await enqueueCallback(callbacks, { url, event });
  };

  const completeBatch = async (batchId: string): Promise<void> => {
    const record = await batches.get(batchId);
    if (record?.callbackUrl === undefined) return;
    const finished = await batches.finished(batchId);
    const items = record.items.map((item) =>
      item.status === "queued" ? { id: item.id, status: finished.get(item.id) ?? "failed" } : item,
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

  return {
    completeBatch,
    async settle(job, outcome) {
      const recorded = await results.saveOnce(job.id, outcome);
      await announce(job.id);
      const { data } = job;
      if (data.callbackUrl !== undefined) {
        const conversationId = data.conversationId ?? null;
        const batch = data.batchId === undefined ? {} : { batchId: data.batchId };
        const metadata = data.metadata ?? null;
        await notify(
          data.callbackUrl,
          recorded.status === "completed"
            ? { type: "compaction.completed", id: job.id, conversationId, ...batch, result: recorded.result, metadata }
            : {
                type: "compaction.failed",
                id: job.id,
                conversationId,
                ...batch,
                error: { ...recorded.error, status: recorded.status },
                metadata,
              },
        );
      }
      if (data.batchId !== undefined && (await batches.markFinished(data.batchId, job.id, recorded.status))) {
        await completeBatch(data.batchId);
      }
      return recorded;
    },
  };
}
