/**
 * The request bodies, as zod schemas: the one definition the validation and
 * the OpenAPI document (openapiDocument.ts) are both made from.
 *
 * The schemas check the envelope (types, ranges, unknown keys). The messages
 * themselves are checked by the core's parser, which knows both provider
 * shapes and names the exact field (`messages[3].content[0].tool_use_id`).
 */
import { z } from "zod";
import { REASONS } from "../core/compactor.js";
import { refusedRequestField } from "../core/formats/nestingDepth.js";
import {
  DEFAULT_KEEP_RECENT_TOKENS,
  DEFAULT_RESERVE_TOKENS,
  DEFAULT_SUMMARIZATION_STALL_TIMEOUT_MS,
  MAX_SUMMARIZATION_STALL_TIMEOUT_MS,
  MAX_TOKEN_COUNT,
  MIN_SUMMARIZATION_STALL_TIMEOUT_MS,
  MIN_USABLE_TOKENS,
} from "../core/settings.js";
import { hasLoneSurrogate } from "../core/wellFormedText.js";
import { ApiError, invalidField } from "./apiError.js";
import { ErrorCodes } from "../client/errorCodes.js";
import { MODEL_ID, MODEL_ID_FORM } from "../summarizers/modelId.js";

/** Most messages one conversation may have; far past any real context window. */
const MAX_MESSAGES = 100_000;

/** `metadata` travels uncompressed in the job and in every callback: keep it small. */
const MAX_METADATA_BYTES = 16 * 1024;

const MAX_INSTRUCTIONS_CHARS = 20_000;

const tokens = z.int().min(1).max(MAX_TOKEN_COUNT);

const settings = z
  .strictObject({
    reserveTokens: tokens.optional().describe(`Room kept free for the next response. Default ${DEFAULT_RESERVE_TOKENS}.`),
    keepRecentTokens: tokens
      .optional()
      .describe(`Recent tokens kept verbatim. Default ${DEFAULT_KEEP_RECENT_TOKENS}, lowered to a quarter of the usable window.`),
    maxSummaryTokens: tokens.optional().describe("Cap on the summary's length. Default: four fifths of the reserve."),
    stallTimeoutMs: z
      .int()
      .min(MIN_SUMMARIZATION_STALL_TIMEOUT_MS)
      .max(MAX_SUMMARIZATION_STALL_TIMEOUT_MS)
      .optional()
      .describe(
        `How long the summarizer's stream may stay silent (keep-alive pings are silence; waiting out the provider's retry-after is not) before the call is abandoned. Default ${DEFAULT_SUMMARIZATION_STALL_TIMEOUT_MS}.`,
      ),
  })
  .describe("Budget overrides; the context window is given separately.");

const metadata = z
  .record(z.string(), z.unknown())
  .refine((value) => Buffer.byteLength(JSON.stringify(value)) <= MAX_METADATA_BYTES, {
    message: `must be at most ${MAX_METADATA_BYTES} bytes of JSON`,
  })
  .describe("Any JSON object; echoed back in the job view and the callback.");

const callbackUrl = z
  .string()
  .max(2048)
  .describe(
    "Where to POST the result (Standard Webhooks signed): an http or https URL without credentials, on a port other than 0. Must resolve to a public address unless allowed by COMPACTD_CALLBACK_ALLOW.",
  );

/** Fields of one compaction, shared by the single and the batch request. */
const compactionFields = {
  messages: z
    .array(z.unknown())
    .max(MAX_MESSAGES)
    .describe("The conversation: Anthropic Messages or OpenAI Chat Completions messages, as sent to the model."),
  system: z.unknown().optional().describe("Anthropic's top-level system prompt (string or text blocks); passed through unchanged."),
  format: z.enum(["auto", "anthropic", "openai"]).default("auto").describe("The messages' shape; detected when auto."),
  contextWindow: tokens.describe(`The model's context window in tokens; at least the reserve plus ${MIN_USABLE_TOKENS}.`),
  settings: settings.optional(),
  reason: z
    .enum(REASONS)
    .default("manual")
    .describe("Why compaction is asked for. Overflow requests (the agent is blocked) are served first."),
  conversationId: z
    .string()
    .min(1)
    .max(256)
    // Hashed as UTF-8 into its in-flight key and shard, where every lone
    // surrogate becomes U+FFFD: "\ud800", "\udbff" and "\ufffd" would share a key.
    .refine((id) => !hasLoneSurrogate(id), {
      message: "must be well-formed Unicode text: it holds a lone surrogate (a \\uD800-\\uDFFF escape without its pair)",
    })
    .optional()
    .describe(
      "The caller's conversation id: at most one compaction per conversation is queued or running. Well-formed Unicode: a lone surrogate escape (\\uD800-\\uDFFF without its pair) is refused.",
    ),
  model: z
    .string()
    .regex(MODEL_ID, `must be ${MODEL_ID_FORM}`)
    .optional()
    .describe("Summarizer model; the service's COMPACTD_MODEL by default."),
  instructions: z.string().max(MAX_INSTRUCTIONS_CHARS).optional().describe("Extra focus for the summary."),
  usageTokens: z
    .int()
    .min(0)
    .max(MAX_TOKEN_COUNT)
    .optional()
    .describe("The provider's reported input tokens for these messages, to calibrate the estimates."),
  metadata: metadata.optional(),
};

export const compactionRequestSchema = z.strictObject({ ...compactionFields, callbackUrl: callbackUrl.optional() });

export type CompactionRequest = z.output<typeof compactionRequestSchema>;

/** One item of a batch: a compaction request whose callback defaults to the batch's. */
const batchItemSchema = z.strictObject({
  ...compactionFields,
  callbackUrl: callbackUrl
    .optional()
    .describe("Receives this item's compaction.completed or compaction.failed callback instead of the batch's callbackUrl."),
});

export type BatchItemRequest = z.output<typeof batchItemSchema>;

export function batchRequestSchema(maxItems: number) {
  return z.strictObject({
    items: z.array(batchItemSchema).min(1).max(maxItems).describe(`Up to ${maxItems} compactions (COMPACTD_MAX_BATCH_ITEMS).`),
    callbackUrl: callbackUrl
      .optional()
      .describe(
        "Receives compaction.completed or compaction.failed for each queued item without a callbackUrl of its own, and batch.completed once every item has finished.",
      ),
    metadata: metadata.optional(),
  });
}

export type BatchRequest = z.output<ReturnType<typeof batchRequestSchema>>;

/**
 * Validates `body`, throwing a 400 that names the first field at fault.
 * Absent values read "is required" rather than zod's type comparison.
 */
export function parseBody<T>(schema: z.ZodType<T>, body: unknown): T {
  if (body === undefined || body === null || typeof body !== "object" || Array.isArray(body)) {
    throw new ApiError(400, ErrorCodes.invalidRequest, "the request body must be a JSON object");
  }
  // Before anything walks the body recursively (the idempotency digest, metadata's size check) or copies it.
  const refused = refusedRequestField(body, "");
  if (refused !== undefined) throw invalidField(refused.field, refused.problem);
  const parsed = schema.safeParse(body, {
    error: (issue) => (issue.code === "invalid_type" && issue.input === undefined ? "is required" : undefined),
  });
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const path = issue.code === "unrecognized_keys" ? [...issue.path, issue.keys[0] ?? ""] : issue.path;
  const message = issue.code === "unrecognized_keys" ? "is not a known field" : issue.message;
  throw invalidField(fieldPath(path), message);
}

/** `["items", 3, "settings", "reserveTokens"]` → `items[3].settings.reserveTokens`. */
function fieldPath(path: readonly PropertyKey[]): string {
  let field = "";
  for (const segment of path) {
    if (typeof segment === "number") field += `[${segment}]`;
    else field += field === "" ? String(segment) : `.${String(segment)}`;
  }
  return field === "" ? "body" : field;
}
