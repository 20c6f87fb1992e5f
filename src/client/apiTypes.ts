/**
 * The request and response bodies of the compactd HTTP API.
 *
 * Generated from the API's OpenAPI document (docs/openapi.json, what GET
 * /openapi.json serves) by scripts/openapiToTypeScript.ts. Do not edit; run
 * `npx vitest run test/client/apiTypes.test.ts -u` after changing the API.
 */

export interface ErrorBody {
  error: {
    /** Stable machine-readable code, e.g. invalid_conversation. */
    code: string;
    message: string;
    /** The request field at fault, e.g. messages[3].content[0].tool_use_id. */
    field?: string;
    /** The job the error is about (the compaction in flight on a 409). */
    jobId?: string;
  };
}

export interface Queued {
  id: string;
  status: string;
}

export interface NothingToCompact {
  status: "nothing_to_compact";
  /** The context is above the threshold (`contextWindow` less the reserve) all the same: what compaction keeps verbatim (the newest message or tool call, whatever its size, or the system prompt) is larger than the window leaves, so the agent cannot continue against its model, and asking again will not help: shrink the largest messages (clip a pasted text or a tool's output) or move to a larger window. Sent with every such answer; absent from answers of versions before it was added. */
  stillAboveThreshold?: boolean;
}

/** The exact-swap contract: the result's messages replace the first `count` messages of the request, whose canonical JSON (sorted keys, no whitespace) hashes to `digest`. */
export interface Replaces {
  count: number;
  digest: string;
}

/** The core's compaction result, as `compactd compact` prints it, plus `replaces`. */
export interface Result {
  /** The request's Anthropic top-level system prompt, unchanged; present when the request had one, so the result has the request's shape. */
  system?: unknown;
  /** Replaces the request's messages; OpenAI system and developer messages that led them lead them still. */
  messages: readonly unknown[];
  /** Valid Unicode: a lone surrogate it quotes from the conversation (broken bytes in a tool's output) is written as U+FFFD, as it is in what the LLM summarizer is sent. Messages kept verbatim come back as received. */
  summary: string;
  reason: "threshold" | "overflow" | "manual";
  tokensBefore: number;
  tokensAfter: number;
  messagesBefore: number;
  messagesAfter: number;
  /** A summary is the offline summary because the LLM summarizer failed: the context shrank, its memory is coarser. */
  degraded: boolean;
  /** Each summarizer call that failed, in order; empty when not degraded. `cause`: `error` (the call failed: rate limit, overload, server error, dropped stream) and `stalled` (the stream went silent) may pass on a later try; `rejected` (the provider refused the request as it is: an unknown model, a bad key, an invalid request; `message` says what it answered), `overflow` (the request did not fit the summarizer's window), `truncated` (the summary hit its token cap), `unfinished` (the answer stopped another way, not a finished summary: `pause_turn`, `tool_use`, no stop reason), `refused` (the model declined to summarize) and `empty` come back the same from the same request. */
  degradation: readonly ({
    /** Which summary the call was for. */
    kind: "history" | "turnPrefix";
    cause: "error" | "stalled" | "rejected" | "overflow" | "truncated" | "unfinished" | "refused" | "empty";
    message: string;
  })[];
  /** The `message`s of `degradation`, joined with `; `; null when not degraded. */
  degradedReason: string | null;
  /** Which summarizer wrote the summary: the LLM summarizer's name (`anthropic`), or `offline` when the offline summarizer wrote any part of it, by choice (no API key) or as the fallback (then `degraded` is true). */
  summarizer: string;
  splitTurn: boolean;
  checkpoint: {
    turnId: string;
    summary: string;
    degraded: boolean;
  } | null;
  /** Summarized messages that neither the summarization request nor the summary represents: for an LLM, the messages left out of its request because they did not fit (the oldest, or, when the summarized range opens with a user request, the messages right after it: the request itself is kept); for the offline summary, the messages no line of it stands for. User requests carried verbatim after the summary count as represented. */
  omitted: number;
  firstKeptIndex: number;
  /** Characters of the previous compaction's summary that the offline summary left out. The offline summary (by choice, or as the fallback when the LLM summarizer failed) keeps the previous summary whole, since it is the only record of everything before it; this is above 0 only when the previous summary alone outgrew the summary budget, and the cut is also marked in the text. 0 when an LLM wrote the summary (it was asked to update the previous one). Absent from results written by versions before it was added (a worker not yet upgraded during a rolling deploy): how much was cut is then unknown. */
  previousSummaryCharsCut?: number;
  /** `tokensAfter` is still above the threshold (`contextWindow` less the reserve): what compaction keeps verbatim (the newest message or tool result, the system prompt, or the summary with its pinned requests and file lists in a window barely above the reserve) is too large for it. Compacting again gives the same result: lower `keepRecentTokens` or `maxSummaryTokens`, shrink the largest messages, or move to a larger window, instead of asking again at the next turn. Absent from results written by versions before it was added (a worker not yet upgraded during a rolling deploy): `isAboveThreshold(normalizeSettings({contextWindow, ...settings}), tokensAfter)` from `compactd/client` answers the same. */
  stillAboveThreshold?: boolean;
  replaces: Replaces;
}

export interface Job {
  id: string;
  status: "queued" | "active" | "completed" | "failed" | "cancelled";
  reason: "threshold" | "overflow" | "manual";
  conversationId: string | null;
  /** How many times a worker has started the job. */
  attempts: number;
  createdAt: string;
  /** When a worker last started the job; null only when no worker ever started it. A job waiting out a retry backoff (status queued, attempts above 0) keeps the start of its last attempt, and so does such a job once cancelled. */
  startedAt: string | null;
  finishedAt: string | null;
  batchId?: string;
  metadata?: Record<string, unknown>;
  result?: Result;
  error?: ErrorBody["error"];
}

export interface Batch {
  id: string;
  status: "running" | "completed";
  createdAt: string;
  /** Items by status. */
  counts: Record<string, number>;
  items: readonly ({
    id?: string;
    status: "queued" | "active" | "completed" | "failed" | "cancelled" | "nothing_to_compact" | "in_flight";
    /** For in_flight: the job already compacting this conversation. */
    inFlightId?: string;
    /** For nothing_to_compact: as for a single compaction. Absent from batches stored by versions before it was added. */
    stillAboveThreshold?: NothingToCompact["stillAboveThreshold"];
  })[];
  metadata?: Record<string, unknown>;
}

export interface CompactionRequest {
  /** The conversation: Anthropic Messages or OpenAI Chat Completions messages, as sent to the model. */
  messages: readonly unknown[];
  /** Anthropic's top-level system prompt (string or text blocks); passed through unchanged. */
  system?: unknown;
  /**
   * The messages' shape; detected when auto.
   * @default "auto"
   */
  format?: "auto" | "anthropic" | "openai";
  /** The model's context window in tokens; at least the reserve plus 2048. */
  contextWindow: number;
  /** Budget overrides; the context window is given separately. */
  settings?: {
    /** Room kept free for the next response. Default 16384. */
    reserveTokens?: number;
    /** Recent tokens kept verbatim. Default 20000, lowered to a quarter of the usable window. */
    keepRecentTokens?: number;
    /** Cap on the summary's length. Default: four fifths of the reserve. */
    maxSummaryTokens?: number;
    /** How long the summarizer's stream may stay silent (keep-alive pings are silence; waiting out the provider's retry-after is not) before the call is abandoned. Default 120000. */
    stallTimeoutMs?: number;
  };
  /**
   * Why compaction is asked for. Overflow requests (the agent is blocked) are served first.
   * @default "manual"
   */
  reason?: "threshold" | "overflow" | "manual";
  /** The caller's conversation id: at most one compaction per conversation is queued or running. Well-formed Unicode: a lone surrogate escape (\uD800-\uDFFF without its pair) is refused. */
  conversationId?: string;
  /** Summarizer model; the service's COMPACTD_MODEL by default. */
  model?: string;
  /** Extra focus for the summary. */
  instructions?: string;
  /** The provider's reported input tokens for these messages, to calibrate the estimates. */
  usageTokens?: number;
  /** Any JSON object; echoed back in the job view and the callback. */
  metadata?: Record<string, unknown>;
  /** Where to POST the result (Standard Webhooks signed): an http or https URL without credentials, on a port other than 0. Must resolve to a public address unless allowed by COMPACTD_CALLBACK_ALLOW. */
  callbackUrl?: string;
}

export interface BatchRequest {
  /** Up to 100 compactions (COMPACTD_MAX_BATCH_ITEMS). */
  items: readonly ({
    /** The conversation: Anthropic Messages or OpenAI Chat Completions messages, as sent to the model. */
    messages: readonly unknown[];
    /** Anthropic's top-level system prompt (string or text blocks); passed through unchanged. */
    system?: unknown;
    /**
     * The messages' shape; detected when auto.
     * @default "auto"
     */
    format?: "auto" | "anthropic" | "openai";
    /** The model's context window in tokens; at least the reserve plus 2048. */
    contextWindow: number;
    /** Budget overrides; the context window is given separately. */
    settings?: {
      /** Room kept free for the next response. Default 16384. */
      reserveTokens?: number;
      /** Recent tokens kept verbatim. Default 20000, lowered to a quarter of the usable window. */
      keepRecentTokens?: number;
      /** Cap on the summary's length. Default: four fifths of the reserve. */
      maxSummaryTokens?: number;
      /** How long the summarizer's stream may stay silent (keep-alive pings are silence; waiting out the provider's retry-after is not) before the call is abandoned. Default 120000. */
      stallTimeoutMs?: number;
    };
    /**
     * Why compaction is asked for. Overflow requests (the agent is blocked) are served first.
     * @default "manual"
     */
    reason?: "threshold" | "overflow" | "manual";
    /** The caller's conversation id: at most one compaction per conversation is queued or running. Well-formed Unicode: a lone surrogate escape (\uD800-\uDFFF without its pair) is refused. */
    conversationId?: string;
    /** Summarizer model; the service's COMPACTD_MODEL by default. */
    model?: string;
    /** Extra focus for the summary. */
    instructions?: string;
    /** The provider's reported input tokens for these messages, to calibrate the estimates. */
    usageTokens?: number;
    /** Any JSON object; echoed back in the job view and the callback. */
    metadata?: Record<string, unknown>;
    /** Receives this item's compaction.completed or compaction.failed callback instead of the batch's callbackUrl. */
    callbackUrl?: string;
  })[];
  /** Receives compaction.completed or compaction.failed for each queued item without a callbackUrl of its own, and batch.completed once every item has finished. */
  callbackUrl?: string;
  /** Any JSON object; echoed back in the job view and the callback. */
  metadata?: Record<string, unknown>;
}
