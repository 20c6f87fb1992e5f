/**
 * From a validated request to a job, or to "nothing to compact".
 *
 * The decision whether compaction can help at all is made here, in the API,
 * before anything is queued: `prepare` only tokenizes the recent tail, and an
 * agent that asks every round (most rounds have nothing outside the
 * keep-recent budget) gets its answer in milliseconds without a job, a worker
 * or a summarizer call.
 */
import { createHash, randomUUID } from "node:crypto";
import { InvalidConversationError } from "../core/errors.js";
import { parseConversation } from "../core/formats/parseConversation.js";
import type { Conversation } from "../core/message.js";
import { prepare } from "../core/prepare.js";
import { canonicalJson, replacesOf } from "../core/replaces.js";
import { minimumContextWindow, normalizeSettings } from "../core/settings.js";
import { TokenEstimator } from "../core/tokenEstimator.js";
import type { CompactionJobData, ConversationPayload } from "../queue/compactionJob.js";
import { encodePayload } from "../queue/payloadCodec.js";
import { invalidField } from "./apiError.js";
import type { BatchItemRequest } from "./requestSchemas.js";
import { ErrorCodes } from "../client/errorCodes.js";

export interface IntakeContext {
  readonly tenant: string;
  /** Where the request sits in the body (`items[3].` in a batch), for error fields. */
  readonly fieldPrefix: string;
  /** {@link requestDigestOf} the request when it carries an Idempotency-Key, else empty. */
  readonly requestDigest: string;
  readonly callbackUrl?: string;
  readonly batchId?: string;
}

export type Intake = { readonly kind: "nothing_to_compact" } | { readonly kind: "job"; readonly data: CompactionJobData };

/** Checks the conversation; throws a 400 naming the field (`messages[2].role`) when it is not one. */
export function parseRequestConversation(request: BatchItemRequest, fieldPrefix: string): Conversation {
  try {
    return parseConversation({ messages: request.messages, system: request.system }, request.format);
  } catch (err) {
    if (!(err instanceof InvalidConversationError)) throw err;
    const detail = err.message.startsWith(`${err.field}: `) ? err.message.slice(err.field.length + 2) : err.message;
    throw invalidField(`${fieldPrefix}${err.field}`, detail, ErrorCodes.invalidConversation);
  }
}

/** Decides whether there is anything to compact and, if so, builds the job. */
export async function intake(request: BatchItemRequest, conversation: Conversation, context: IntakeContext): Promise<Intake> {
  const settings = normalizeSettings({ ...request.settings, contextWindow: request.contextWindow });
  const smallest = minimumContextWindow(settings.reserveTokens);
  if (request.contextWindow < smallest) {
    throw invalidField(
      `${context.fieldPrefix}contextWindow`,
      `leaves no room for the conversation: ${settings.reserveTokens} tokens are reserved for the next response (settings.reserveTokens), so it must be at least ${smallest}`,
    );
  }
  const estimator = new TokenEstimator({ usageTokens: request.usageTokens });
  const preparation = prepare(conversation, settings, estimator);
  if (preparation === null) return { kind: "nothing_to_compact" };

  const payload: ConversationPayload = {
    messages: request.messages,
    format: request.format,
    ...(request.system !== undefined && { system: request.system }),
  };
  const data: CompactionJobData = {
    tenant: context.tenant,
    payload: await encodePayload(payload),
    contextWindow: request.contextWindow,
    settings: request.settings ?? {},
    reason: request.reason,
    submissionId: randomUUID(),
    requestDigest: context.requestDigest,
    tokenCounts: estimator.knownCounts(conversation),
    replaces: replacesOf(request.messages),
    ...defined({
      conversationId: request.conversationId,
      callbackUrl: context.callbackUrl,
      model: request.model,
      instructions: request.instructions,
      usageTokens: request.usageTokens,
      metadata: request.metadata,
      batchId: context.batchId,
    }),
  };
  return { kind: "job", data };
}

/** What an idempotency key is bound to: the whole validated request, whatever its key order. */
export function requestDigestOf(request: unknown): string {
  return createHash("sha256").update(canonicalJson(request)).digest("hex");
}

/** Drops undefined members, which BullMQ's JSON would drop anyway, so the job data type stays honest. */
function defined<T extends Record<string, unknown>>(fields: T): Partial<T> {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) as Partial<T>;
}
