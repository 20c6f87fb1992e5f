/**
 * From a validated request to a job, or to "nothing to compact".
 *
 * The decision whether compaction can help at all is made here, in the API,
 * before anything is queued, by the core's cut plan alone: it only tokenizes
 * the recent tail, and an agent that asks every round (most rounds have
 * nothing outside the keep-recent budget) gets its answer in milliseconds
 * without a job, a worker or a summarizer call. Everything else the
 * compaction needs (the summarizer inputs, file operations) is the worker's;
 * the counts the plan made travel with the job so the worker tokenizes none
 * of those messages again.
 */
import { randomUUID } from "node:crypto";
import { isContextAboveThreshold } from "../core/contextAboveThreshold.js";
import { planCut } from "../core/cutPlan.js";
import { InvalidConversationError } from "../core/errors.js";
import { parseConversation } from "../core/formats/parseConversation.js";
import type { Conversation } from "../core/message.js";
import { replacesOf } from "../core/replaces.js";
import { minimumContextWindow, normalizeSettings } from "../core/settings.js";
import { TokenEstimator } from "../core/tokenEstimator.js";
import { ErrorCodes } from "../client/errorCodes.js";
import type { CompactionJobData, CompactionSubmission, ConversationPayload } from "../queue/compactionJob.js";
import { encodePayload } from "../queue/payloadCodec.js";
import { invalidField, type ApiError } from "./apiError.js";
import { jsonBytes, takenJson } from "./asciiJson.js";
import type { CanonicalMessages } from "./requestDigest.js";
import type { BatchItemRequest } from "./requestSchemas.js";

export interface IntakeContext {
  readonly tenant: string;
  /** Where the request sits in the body (`items[3].` in a batch), for error fields. */
  readonly fieldPrefix: string;
  /** The request's digest when it carries an Idempotency-Key, else empty. */
  readonly requestDigest: string;
  /** The canonical JSON of the request's messages, written once for the digest and the job's `replaces`. */
  readonly canonical: CanonicalMessages;
  readonly callbackUrl?: string;
  readonly batchId?: string;
  /**
   * The whole request's JSON as taken in (asciiJson.ts), when the
   * request is this one compaction: its fields are the payload's (see
   * ConversationPayload), so they are stored as they are rather than
   * written out again.
   */
  readonly requestJson?: string | Buffer;
}

export type Intake =
  /**
   * `stillAboveThreshold`: the context is above the threshold all the same,
   * so the agent cannot continue and compaction is not the remedy (see
   * contextAboveThreshold.ts); the answer and the metrics say so.
   */
  | { readonly kind: "nothing_to_compact"; readonly stillAboveThreshold: boolean }
  | ({ readonly kind: "job" } & CompactionSubmission)
  /**
   * The conversation or its window is refused: a 400 naming the field. It is
   * returned, not thrown, so a route answers an idempotent replay first, as
   * it did when the request was first taken in.
   */
  | { readonly kind: "refused"; readonly error: ApiError };

/**
 * Checks the conversation, decides whether there is anything to compact and,
 * if so, builds the job. The body's nesting depth has been checked already
 * (parseBody), so the parser does not walk it again.
 */
export function intake(request: BatchItemRequest, context: IntakeContext): Intake {
  let conversation: Conversation;
  try {
    conversation = parseConversation({ messages: request.messages, system: request.system }, request.format, { nestingChecked: true });
  } catch (err) {
    if (!(err instanceof InvalidConversationError)) throw err;
    const detail = err.message.startsWith(`${err.field}: `) ? err.message.slice(err.field.length + 2) : err.message;
    return { kind: "refused", error: invalidField(`${context.fieldPrefix}${err.field}`, detail, ErrorCodes.invalidConversation) };
  }
  const settings = normalizeSettings({ ...request.settings, contextWindow: request.contextWindow });
  const smallest = minimumContextWindow(settings.reserveTokens);
  if (request.contextWindow < smallest) {
    const error = invalidField(
      `${context.fieldPrefix}contextWindow`,
      `leaves no room for the conversation: ${settings.reserveTokens} tokens are reserved for the next response (settings.reserveTokens), so it must be at least ${smallest}`,
    );
    return { kind: "refused", error };
  }
  const estimator = new TokenEstimator({ usageTokens: request.usageTokens });
  if (planCut(conversation, settings, estimator) === null) {
    return { kind: "nothing_to_compact", stillAboveThreshold: isContextAboveThreshold(conversation, settings, estimator) };
  }

  const data: CompactionJobData = {
    tenant: context.tenant,
    contextWindow: request.contextWindow,
    settings: request.settings ?? {},
    reason: request.reason,
    submissionId: randomUUID(),
    requestDigest: context.requestDigest,
    tokenCounts: estimator.knownCounts(conversation),
    replaces: replacesOf(request.messages, { digest: context.canonical.digestOf(request.messages) }),
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
  return { kind: "job", data, payload: encodePayload(jsonBytes(context.requestJson ?? payloadJson(request))) };
}

/**
 * A batch item's payload, written out as JSON and taken in as a body is
 * (asciiJson.ts), so the worker parses it as fast as a single request's.
 */
function payloadJson(request: BatchItemRequest): string | Buffer {
  const payload: ConversationPayload = { messages: request.messages, format: request.format, ...(request.system !== undefined && { system: request.system }) };
  return takenJson(Buffer.from(JSON.stringify(payload), "utf8"));
}

/** Drops undefined members, which BullMQ's JSON would drop anyway, so the job data type stays honest. */
function defined<T extends Record<string, unknown>>(fields: T): Partial<T> {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) as Partial<T>;
}
