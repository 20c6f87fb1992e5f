/**
 * The OpenAPI 3.1 contract served at `GET /openapi.json` (and written to
 * docs/openapi.json, which docs/API.md is made from).
 *
 * Request bodies are generated from the same zod schemas that validate them,
 * so the document cannot drift from what the API accepts; responses are
 * written out here beside the types they describe.
 */
import { z } from "zod";
import { batchRequestSchema, compactionRequestSchema } from "./requestSchemas.js";
import { MAX_WAIT_SECONDS } from "./jobWaiter.js";
import { RETRY_AFTER_SECONDS } from "./apiError.js";
import { ACCEPTED_CODINGS } from "./requestEncoding.js";
import { DEGRADATION_CAUSES } from "../core/degradation.js";
import { RESULT_FIELDS_ADDED_LATER, type StoredResult } from "../queue/resultStore.js";

type Schema = Record<string, unknown>;

const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
const nullable = (schema: Schema): Schema => ({ anyOf: [schema, { type: "null" }] });
const dateTime: Schema = { type: "string", format: "date-time" };

/** A request body schema, as input (defaults make fields optional), without its own `$schema`. */
function requestBody(schema: z.ZodType): Schema {
  const { $schema: _dialect, ...body } = z.toJSONSchema(schema, { io: "input" }) as Schema;
  return body;
}

/**
 * The result's fields, one schema each, keyed by the stored result's own
 * fields: a field added to the core's Result does not compile until the
 * contract describes it.
 */
const resultProperties: Record<keyof StoredResult, Schema> = {
  system: {
    description:
      "The request's Anthropic top-level system prompt, unchanged; present when the request had one, so the result has the request's shape.",
  },
  messages: { type: "array", items: {}, description: "Replaces the request's messages; OpenAI system and developer messages that led them lead them still." },
  summary: {
    type: "string",
    description:
      "Valid Unicode: a lone surrogate it quotes from the conversation (broken bytes in a tool's output) is written as U+FFFD, as it is in what the LLM summarizer is sent. Messages kept verbatim come back as received.",
  },
  reason: { enum: ["threshold", "overflow", "manual"] },
  tokensBefore: { type: "integer" },
  tokensAfter: { type: "integer" },
  messagesBefore: { type: "integer" },
  messagesAfter: { type: "integer" },
  degraded: {
    type: "boolean",
    description: "A summary is the offline summary because the LLM summarizer failed: the context shrank, its memory is coarser.",
  },
  degradation: {
    type: "array",
    description:
      "Each summarizer call that failed, in order; empty when not degraded. `cause`: `error` (the call failed: rate limit, overload, server error, dropped stream) and `stalled` (the stream went silent) may pass on a later try; `rejected` (the provider refused the request as it is: an unknown model, a bad key, an invalid request; `message` says what it answered), `overflow` (the request did not fit the summarizer's window), `truncated` (the summary hit its token cap), `unfinished` (the answer stopped another way, not a finished summary: `pause_turn`, `tool_use`, no stop reason), `refused` (the model declined to summarize) and `empty` come back the same from the same request.",
    items: {
      type: "object",
      required: ["kind", "cause", "message"],
      properties: {
        kind: { enum: ["history", "turnPrefix"], description: "Which summary the call was for." },
        cause: { enum: [...DEGRADATION_CAUSES] },
        message: { type: "string" },
      },
    },
  },
  degradedReason: nullable({ type: "string", description: "The `message`s of `degradation`, joined with `; `; null when not degraded." }),
  summarizer: {
    type: "string",
    description:
      "Which summarizer wrote the summary: the LLM summarizer's name (`anthropic`), or `offline` when the offline summarizer wrote any part of it, by choice (no API key) or as the fallback (then `degraded` is true).",
  },
  splitTurn: { type: "boolean" },
  checkpoint: nullable({
    type: "object",
    required: ["turnId", "summary", "degraded"],
    properties: { turnId: { type: "string" }, summary: { type: "string" }, degraded: { type: "boolean" } },
  }),
  omitted: {
    type: "integer",
    description:
      "Summarized messages that neither the summarization request nor the summary represents: for an LLM, the messages left out of its request because they did not fit (the oldest, or, when the summarized range opens with a user request, the messages right after it: the request itself is kept); for the offline summary, the messages no line of it stands for. User requests carried verbatim after the summary count as represented.",
  },
  firstKeptIndex: { type: "integer" },
  previousSummaryCharsCut: {
    type: "integer",
    minimum: 0,
    description:
      "Characters of the previous compaction's summary that the offline summary left out. The offline summary (by choice, or as the fallback when the LLM summarizer failed) keeps the previous summary whole, since it is the only record of everything before it; this is above 0 only when the previous summary alone outgrew the summary budget, and the cut is also marked in the text. 0 when an LLM wrote the summary (it was asked to update the previous one). Absent from results written by versions before it was added (a worker not yet upgraded during a rolling deploy): how much was cut is then unknown.",
  },
  stillAboveThreshold: {
    type: "boolean",
    description:
      "`tokensAfter` is still above the threshold (`contextWindow` less the reserve): what compaction keeps verbatim (the newest message or tool result, the system prompt, or the summary with its pinned requests and file lists in a window barely above the reserve) is too large for it. Compacting again gives the same result: lower `keepRecentTokens` or `maxSummaryTokens`, shrink the largest messages, or move to a larger window, instead of asking again at the next turn. Absent from results written by versions before it was added (a worker not yet upgraded during a rolling deploy): `isAboveThreshold(normalizeSettings({contextWindow, ...settings}), tokensAfter)` from `compactd/client` answers the same.",
  },
  replaces: ref("Replaces"),
};

/**
 * Fields a result may lack: `system` unless the request had one, and those a
 * result stored by an earlier version does not have (see RESULT_FIELDS_ADDED_LATER).
 */
const OPTIONAL_RESULT_FIELDS: readonly string[] = ["system", ...RESULT_FIELDS_ADDED_LATER];

const schemas: Record<string, Schema> = {
  Error: {
    type: "object",
    required: ["error"],
    properties: {
      error: {
        type: "object",
        required: ["code", "message"],
        properties: {
          code: { type: "string", description: "Stable machine-readable code, e.g. invalid_conversation." },
          message: { type: "string" },
          field: { type: "string", description: "The request field at fault, e.g. messages[3].content[0].tool_use_id." },
          jobId: { type: "string", description: "The job the error is about (the compaction in flight on a 409)." },
        },
      },
    },
  },
  Queued: {
    type: "object",
    required: ["id", "status"],
    properties: { id: { type: "string" }, status: { type: "string" } },
  },
  NothingToCompact: {
    type: "object",
    required: ["status"],
    properties: {
      status: { const: "nothing_to_compact" },
      stillAboveThreshold: {
        type: "boolean",
        description:
          "The context is above the threshold (`contextWindow` less the reserve) all the same: what compaction keeps verbatim (the newest message or tool call, whatever its size, or the system prompt) is larger than the window leaves, so the agent cannot continue against its model, and asking again will not help: shrink the largest messages (clip a pasted text or a tool's output) or move to a larger window. Sent with every such answer; absent from answers of versions before it was added.",
      },
    },
  },
  Replaces: {
    type: "object",
    description:
      "The exact-swap contract: the result's messages replace the first `count` messages of the request, whose canonical JSON (sorted keys, no whitespace) hashes to `digest`.",
    required: ["count", "digest"],
    properties: { count: { type: "integer", minimum: 0 }, digest: { type: "string", pattern: "^[0-9a-f]{64}$" } },
  },
  Result: {
    type: "object",
    description: "The core's compaction result, as `compactd compact` prints it, plus `replaces`.",
    required: Object.keys(resultProperties).filter((field) => !OPTIONAL_RESULT_FIELDS.includes(field)),
    properties: resultProperties,
  },
  Job: {
    type: "object",
    required: ["id", "status", "reason", "conversationId", "attempts", "createdAt", "startedAt", "finishedAt"],
    properties: {
      id: { type: "string" },
      status: { enum: ["queued", "active", "completed", "failed", "cancelled"] },
      reason: { enum: ["threshold", "overflow", "manual"] },
      conversationId: nullable({ type: "string" }),
      attempts: { type: "integer", description: "How many times a worker has started the job." },
      createdAt: dateTime,
      startedAt: {
        ...nullable(dateTime),
        description:
          "When a worker last started the job; null only when no worker ever started it. A job waiting out a retry backoff (status queued, attempts above 0) keeps the start of its last attempt, and so does such a job once cancelled.",
      },
      finishedAt: nullable(dateTime),
      batchId: { type: "string" },
      metadata: { type: "object" },
      result: ref("Result"),
      error: { $ref: "#/components/schemas/Error/properties/error" },
    },
  },
  Batch: {
    type: "object",
    required: ["id", "status", "createdAt", "counts", "items"],
    properties: {
      id: { type: "string" },
      status: { enum: ["running", "completed"] },
      createdAt: dateTime,
      counts: { type: "object", additionalProperties: { type: "integer" }, description: "Items by status." },
      items: {
        type: "array",
        items: {
          type: "object",
          required: ["status"],
          properties: {
            id: { type: "string" },
            status: { enum: ["queued", "active", "completed", "failed", "cancelled", "nothing_to_compact", "in_flight"] },
            inFlightId: { type: "string", description: "For in_flight: the job already compacting this conversation." },
            stillAboveThreshold: {
              $ref: "#/components/schemas/NothingToCompact/properties/stillAboveThreshold",
              description: "For nothing_to_compact: as for a single compaction. Absent from batches stored by versions before it was added.",
            },
          },
        },
      },
      metadata: { type: "object" },
    },
  },
};

const errorResponse = (description: string): Schema => ({
  description,
  content: { "application/json": { schema: ref("Error") } },
});

const json = (description: string, schema: Schema, headers?: Schema): Schema => ({
  description,
  ...(headers !== undefined && { headers }),
  content: { "application/json": { schema } },
});

const idempotencyKey: Schema = {
  name: "Idempotency-Key",
  in: "header",
  required: false,
  description: "Repeating a request with the same key returns the same job instead of queuing another.",
  schema: { type: "string", maxLength: 255 },
};

const contentEncoding: Schema = {
  name: "Content-Encoding",
  in: "header",
  required: false,
  description: `The body may be sent compressed (${ACCEPTED_CODINGS.join(", ")}); the body limit counts what it decompresses to.`,
  schema: { type: "string", enum: ["identity", ...ACCEPTED_CODINGS] },
};

const badInput = {
  "400": errorResponse(
    "The request is malformed; `field` names what to fix (`invalid_content_encoding`: the body is not what its Content-Encoding says; `invalid_json`: the body is not JSON, or not UTF-8, the message saying at which byte).",
  ),
  "401": errorResponse("Missing or unknown API key."),
  "413": errorResponse("The body is larger than COMPACTD_BODY_LIMIT_BYTES (a compressed body: once decompressed)."),
  "415": errorResponse(
    "The body is not application/json, its Content-Type declares a charset other than UTF-8 (the message names it), or its Content-Encoding is not one taken (`Accept-Encoding` lists them).",
  ),
  "422": errorResponse("The Idempotency-Key was used before for a different request."),
  "429": {
    ...errorResponse("The backlog is over COMPACTD_MAX_BACKLOG."),
    headers: { "Retry-After": { schema: { type: "integer", const: RETRY_AFTER_SECONDS } } },
  },
  "503": {
    ...errorResponse(
      "This API process cannot take the request now; retry (with the same Idempotency-Key). `busy`: at its intake limit (COMPACTD_MAX_INTAKES, COMPACTD_MAX_INTAKE_BYTES), the body unread. `intake_deadline`: taking the body in took longer than COMPACTD_INTAKE_DEADLINE_MS; nothing was queued. `shutting_down`: the process is stopping; nothing was queued. `unavailable`: Redis cannot serve it now.",
    ),
    headers: { "Retry-After": { schema: { type: "integer", const: RETRY_AFTER_SECONDS } } },
  },
};

const pathId = (description: string): Schema => ({ name: "id", in: "path", required: true, description, schema: { type: "string" } });

/** The document, typed as far as the service reads it (the HTTP metrics pre-export its paths' statuses). */
export type OpenApiDocument = Schema & {
  readonly paths: Readonly<Record<string, Readonly<Record<string, Schema & { readonly responses: Readonly<Record<string, unknown>> }>>>>;
};

export function openapiDocument(maxBatchItems: number): OpenApiDocument {
  return {
    openapi: "3.1.0",
    info: {
      title: "compactd",
      version: "0.1.0",
      description:
        "Context compaction as a service: summarizes the older part of an agent's conversation and keeps the recent tail verbatim, asynchronously, with signed callbacks.",
    },
    security: [{ bearer: [] }],
    components: {
      securitySchemes: { bearer: { type: "http", scheme: "bearer", description: "A key from COMPACTD_API_KEYS; it selects the tenant." } },
      schemas: {
        ...schemas,
        CompactionRequest: requestBody(compactionRequestSchema),
        BatchRequest: requestBody(batchRequestSchema(maxBatchItems)),
      },
    },
    paths: {
      "/v1/compactions": {
        post: {
          summary: "Queue a compaction, or learn at once that there is nothing to compact",
          parameters: [idempotencyKey, contentEncoding],
          requestBody: { required: true, content: { "application/json": { schema: ref("CompactionRequest") } } },
          responses: {
            "200": json("Nothing lies outside the keep-recent budget; no job was queued. `stillAboveThreshold` says whether the context is above the threshold all the same.", ref("NothingToCompact")),
            "202": json("Queued.", ref("Queued"), { Location: { schema: { type: "string" } } }),
            ...badInput,
            "409": errorResponse("A compaction of this conversation is already queued or running; `jobId` names it."),
          },
        },
      },
      "/v1/compactions/{id}": {
        get: {
          summary: "A compaction's status and, once completed, its result",
          parameters: [
            pathId("The job id."),
            {
              name: "wait",
              in: "query",
              required: false,
              description: `Hold the request up to this many seconds until the job finishes (at most ${MAX_WAIT_SECONDS}).`,
              schema: { type: "integer", minimum: 0, maximum: MAX_WAIT_SECONDS },
            },
          ],
          responses: {
            "200": json("The job.", ref("Job")),
            "400": errorResponse("`wait` is not a whole number of seconds in range."),
            "401": errorResponse("Missing or unknown API key."),
            "404": errorResponse("No such job for this tenant."),
            "410": errorResponse("The id was issued by this service, but the job is no longer stored (its result expired, or Redis lost its data): submit again. This can follow a compaction.completed callback: the callback carried the result, and Redis lost it after (docs/OPERATIONS.md, \"When Redis loses its data\")."),
          },
        },
        delete: {
          summary: "Cancel a queued compaction or abort a running one; a body sent with the request is ignored",
          parameters: [pathId("The job id.")],
          responses: {
            "200": json("Cancelled.", ref("Job")),
            "202": json("The running job is being aborted.", ref("Job")),
            "401": errorResponse("Missing or unknown API key."),
            "404": errorResponse("No such job for this tenant."),
            "410": errorResponse("The id was issued by this service, but the job is no longer stored (its result expired, or Redis lost its data): submit again. This can follow a compaction.completed callback: the callback carried the result, and Redis lost it after (docs/OPERATIONS.md, \"When Redis loses its data\")."),
            "409": errorResponse("The job has already completed or failed."),
          },
        },
      },
      "/v1/compactions/batch": {
        post: {
          summary: "Queue many compactions: a callback per item, and one more when all have finished",
          parameters: [idempotencyKey, contentEncoding],
          requestBody: { required: true, content: { "application/json": { schema: ref("BatchRequest") } } },
          responses: {
            "202": json("Accepted; items that had nothing to compact or were in flight are reported as such.", ref("Batch"), {
              Location: { schema: { type: "string" } },
            }),
            ...badInput,
          },
        },
      },
      "/v1/batches/{id}": {
        get: {
          summary: "A batch's items and counts by status",
          parameters: [pathId("The batch id.")],
          responses: {
            "200": json("The batch.", ref("Batch")),
            "401": errorResponse("Missing or unknown API key."),
            "404": errorResponse("No such batch for this tenant."),
            "410": errorResponse("The id was issued by this service, but the batch is no longer stored (its results expired, or Redis lost its data)."),
          },
        },
      },
      "/healthz": {
        get: { summary: "Liveness", security: [], responses: { "200": json("Alive.", { type: "object" }) } },
      },
      "/readyz": {
        get: {
          summary: "Readiness: Redis answers",
          security: [],
          responses: { "200": json("Ready.", { type: "object" }), "503": json("Redis does not answer.", { type: "object" }) },
        },
      },
      "/metrics": {
        get: {
          summary: "Prometheus metrics",
          security: [],
          responses: { "200": { description: "Prometheus text format.", content: { "text/plain": { schema: { type: "string" } } } } },
        },
      },
      "/openapi.json": {
        get: { summary: "This document", security: [], responses: { "200": json("OpenAPI 3.1.", { type: "object" }) } },
      },
    },
  };
}
