/**
 * The CPU work of one POST, and nothing else: validating the body, the
 * Idempotency-Key's request digest, parsing each conversation, its cut plan,
 * and compressing each job's payload. No Redis, no HTTP: it runs on the event
 * loop for small bodies and on an intake thread for large ones
 * (intakePool.ts), and the route does the Redis half with what it returns.
 * Nothing here is queued, so work abandoned half-way (its deadline passed,
 * the process shutting down) leaves nothing behind.
 */
import { intake, type Intake } from "./compactionIntake.js";
import { CanonicalMessages } from "./requestDigest.js";
import { batchRequestSchema, compactionRequestSchema, parseBody, type BatchRequest, type CompactionRequest } from "./requestSchemas.js";
import type { ApiError } from "./apiError.js";

interface TaskBase {
  readonly tenant: string;
  /** Whether the request carries an Idempotency-Key, so its digest is needed. */
  readonly idempotent: boolean;
}

export interface CompactionTask extends TaskBase {
  readonly kind: "compaction";
  /** The parsed body; on an intake thread, its JSON text first (see intakeThread.ts). */
  readonly body: unknown;
  /** The JSON the body was parsed from, as takenJson gave it, when at hand: the job's payload is then that JSON, compressed. */
  readonly json?: string | Buffer;
}

export interface BatchTask extends TaskBase {
  readonly kind: "batch";
  readonly body: unknown;
  /** COMPACTD_MAX_BATCH_ITEMS. */
  readonly maxItems: number;
  /** The batch's id, known from the key (or made up) before the body is read. */
  readonly batchId: string;
}

export type IntakeTask = CompactionTask | BatchTask;

/** What the route needs of a compaction request besides its decision: the request without its conversation. */
export type CompactionEnvelope = Pick<CompactionRequest, "reason" | "conversationId" | "callbackUrl">;

export interface ExaminedCompaction {
  readonly request: CompactionEnvelope;
  /** The request digest when it carries an Idempotency-Key, else empty. */
  readonly requestDigest: string;
  readonly decision: Intake;
}

/** What the route needs of a batch request besides its decisions. */
export interface BatchEnvelope {
  readonly callbackUrl?: string;
  readonly metadata?: unknown;
  readonly items: readonly { readonly reason: CompactionRequest["reason"]; readonly callbackUrl?: string }[];
}

export interface ExaminedBatch {
  readonly request: BatchEnvelope;
  readonly requestDigest: string;
  /** Every item's decision; or the first refused item's error, answered after the route's own checks. */
  readonly decisions: readonly Exclude<Intake, { kind: "refused" }>[] | { readonly refused: ApiError };
}

export function examineCompaction(task: CompactionTask): ExaminedCompaction {
  const body = parseBody(compactionRequestSchema, task.body);
  const canonical = new CanonicalMessages();
  const requestDigest = task.idempotent ? canonical.requestDigest(body, [body.messages]) : "";
  const decision = intake(body, {
    tenant: task.tenant,
    fieldPrefix: "",
    requestDigest,
    canonical,
    ...(body.callbackUrl !== undefined && { callbackUrl: body.callbackUrl }),
    ...(task.json !== undefined && { requestJson: task.json }),
  });
  return { request: compactionEnvelope(body), requestDigest, decision };
}

export function examineBatch(task: BatchTask): ExaminedBatch {
  const body = parseBody(batchRequestSchema(task.maxItems), task.body);
  const canonical = new CanonicalMessages();
  const requestDigest = task.idempotent ? canonical.requestDigest(body, body.items.map((item) => item.messages)) : "";
  const request = batchEnvelope(body);
  // Every item is checked before anything is queued.
  const decisions: Exclude<Intake, { kind: "refused" }>[] = [];
  for (const [index, item] of body.items.entries()) {
    const callbackUrl = item.callbackUrl ?? body.callbackUrl;
    const decided = intake(item, {
      tenant: task.tenant,
      fieldPrefix: `items[${index}].`,
      requestDigest,
      canonical,
      batchId: task.batchId,
      ...(callbackUrl !== undefined && { callbackUrl }),
    });
    if (decided.kind === "refused") return { request, requestDigest, decisions: { refused: decided.error } };
    decisions.push(decided);
  }
  return { request, requestDigest, decisions };
}

function compactionEnvelope(body: CompactionRequest): CompactionEnvelope {
  return {
    reason: body.reason,
    ...(body.conversationId !== undefined && { conversationId: body.conversationId }),
    ...(body.callbackUrl !== undefined && { callbackUrl: body.callbackUrl }),
  };
}

function batchEnvelope(body: BatchRequest): BatchEnvelope {
  return {
    ...(body.callbackUrl !== undefined && { callbackUrl: body.callbackUrl }),
    ...(body.metadata !== undefined && { metadata: body.metadata }),
    items: body.items.map((item) => ({ reason: item.reason, ...(item.callbackUrl !== undefined && { callbackUrl: item.callbackUrl }) })),
  };
}
