/**
 * The bodies the service POSTs to a `callbackUrl`. Built from the API's own
 * types, so a webhook's result is exactly the `result` of `GET
 * /v1/compactions/:id`.
 */
import type { Batch, ErrorBody, Job, Result } from "./apiTypes.js";

export interface CompactionCompletedEvent {
  readonly type: "compaction.completed";
  /** The job id. */
  readonly id: string;
  readonly conversationId: string | null;
  /** The batch the compaction was submitted in, if it was. */
  readonly batchId?: string;
  /** Splice it into the conversation with `applyCompaction`. */
  readonly result: Result;
  /** The request's `metadata`, or null. */
  readonly metadata: unknown;
}

export interface CompactionFailedEvent {
  readonly type: "compaction.failed";
  readonly id: string;
  readonly conversationId: string | null;
  /** The batch the compaction was submitted in, if it was. */
  readonly batchId?: string;
  /** Why, and how the job ended: `failed` or `cancelled`. */
  readonly error: ErrorBody["error"] & { readonly status: Job["status"] };
  readonly metadata: unknown;
}

export interface BatchCompletedEvent {
  readonly type: "batch.completed";
  /** The batch id. */
  readonly id: string;
  readonly conversationId: null;
  /** How every item ended; each queued item also had its own compaction.completed or compaction.failed webhook. */
  readonly result: { readonly counts: Batch["counts"]; readonly items: Batch["items"] };
  readonly metadata: unknown;
}

export type WebhookEvent = CompactionCompletedEvent | CompactionFailedEvent | BatchCompletedEvent;

export const WEBHOOK_EVENT_TYPES: readonly WebhookEvent["type"][] = ["compaction.completed", "compaction.failed", "batch.completed"];
