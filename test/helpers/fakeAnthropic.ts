/**
 * A local HTTP server that speaks `POST /v1/messages` of the Anthropic Messages
 * API, for driving the real `@anthropic-ai/sdk` (pointed at it with `baseURL`)
 * through every way a summarization call can end.
 *
 * It is a real `node:http` server on 127.0.0.1, not a mocked fetch: the SDK's
 * retry loop, SSE parser, abort handling and error classes all run exactly as
 * they do against the API, which is the point. Wire format follows the API:
 * JSON responses, SSE streams with the event sequence the SDK parses
 * (`message_start`, `ping`, `content_block_start/delta/stop`, `message_delta`,
 * `message_stop`), `error` events, and error responses shaped
 * `{"type":"error","error":{"type","message"},"request_id"}` with `request-id`
 * and `retry-after` headers. Like the API, it refuses a body holding a lone
 * surrogate (400 invalid_request_error) before any behaviour is consulted.
 *
 * Each request is answered by a {@link Behaviour}: from a queue (first in,
 * first served, then {@link DEFAULT_BEHAVIOUR}) or from a function of the
 * request. Every request is recorded so tests can assert what the SDK sent.
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import { setMaxListeners } from "node:events";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";

/** Stop reasons of the Messages API that a reply can end with. */
export type FakeStopReason =
  | "end_turn"
  | "max_tokens"
  | "stop_sequence"
  | "tool_use"
  | "pause_turn"
  | "refusal"
  | "model_context_window_exceeded";

/** `error.type` values of the API's error bodies and `error` events. */
export type FakeErrorType =
  | "invalid_request_error"
  | "authentication_error"
  | "permission_error"
  | "not_found_error"
  | "request_too_large"
  | "rate_limit_error"
  | "api_error"
  | "overloaded_error";

/** What a successful reply contains and how fast it streams. */
export interface ReplyOptions {
  /** The assistant text. Default {@link DEFAULT_REPLY_TEXT}. */
  readonly text?: string;
  /** How many `text_delta` events carry the text (split evenly). Default 1. */
  readonly chunks?: number;
  /** A thinking block streamed before the text, as `thinking_delta` events plus a `signature_delta`. */
  readonly thinking?: string;
  /** How many `thinking_delta` events carry the thinking. Default 1. */
  readonly thinkingChunks?: number;
  /**
   * Default `end_turn`. `null` sends a `message_delta` without a stop reason;
   * any other text stands for a stop reason the API may add later.
   */
  readonly stopReason?: FakeStopReason | (string & {}) | null;
  /** Pause before every SSE event after the first. Default 0. */
  readonly delayMs?: number;
  /**
   * Send event i at i × `delayMs` after the first, however late the one
   * before it went out, rather than `delayMs` after it: a provider streams
   * on its own clock, and a fake sharing a busy process (the bench's, which
   * also feeds the queue and takes the callbacks) would otherwise stretch a
   * two-second reply by its own lateness at every pause.
   */
  readonly onSchedule?: boolean;
  /** `ping` events right after `message_start` (the API sends one). Default 1. */
  readonly pings?: number;
  /** Reported usage. Defaults: about a token per four characters of the request and of the reply. */
  readonly inputTokens?: number;
  readonly outputTokens?: number;
}

/**
 * How the server answers one request.
 *
 * Stream faults (`stall`, `cutOff`, `errorEvent`) play the reply's event
 * sequence up to `afterEvents` (counting every SSE event, pings included) and
 * then misbehave. Against a non-streaming request `stall` never answers,
 * `cutOff` drops the connection and `errorEvent` becomes an HTTP error of the
 * same type.
 */
export type Behaviour =
  /** Answer normally: an SSE stream when the request asked for one, else JSON. */
  | ({ readonly kind: "reply" } & ReplyOptions)
  /**
   * An HTTP error with the API's error body. `type` defaults from the status
   * (429 rate_limit_error, 529 overloaded_error, 5xx api_error, 400
   * invalid_request_error, ...).
   *
   * `retryAfterMs` (default 1, `null` for none) is sent as `retry-after` in
   * whole seconds, rounded down (so `0` by default), and as `retry-after-ms`.
   * The SDK prefers the latter; `retry-after: 0` alone would make it fall back
   * to its own 0.5–8 s backoff, which is too slow for tests.
   */
  | {
      readonly kind: "error";
      readonly status: number;
      readonly type?: FakeErrorType;
      readonly message?: string;
      readonly retryAfterMs?: number | null;
      readonly headers?: Readonly<Record<string, string>>;
    }
  /** The API's context-overflow answer: 400 invalid_request_error "prompt is too long: N tokens > M maximum". */
  | { readonly kind: "overflow"; readonly promptTokens?: number; readonly maxTokens?: number }
  /** Send the headers (and the first `afterEvents` events, default 0), then nothing until the client leaves. */
  | ({ readonly kind: "stall"; readonly afterEvents?: number } & ReplyOptions)
  /** Accept the request and never send a byte, not even headers. */
  | { readonly kind: "silent" }
  /**
   * Send the headers and `message_start`, then only a keep-alive every
   * `everyMs` (a `ping` event, or an SSE comment line) until the client
   * leaves: a connection kept open with nothing coming.
   */
  | { readonly kind: "keepAlive"; readonly everyMs: number; readonly with?: "ping" | "comment" }
  /**
   * Send `afterEvents` events, then drop the connection (`destroy`, the
   * default) or end the response cleanly without the rest (`end`).
   */
  | ({ readonly kind: "cutOff"; readonly afterEvents: number; readonly how?: "destroy" | "end" } & ReplyOptions)
  /** Send `afterEvents` events, then an SSE `error` event (default overloaded_error), then end. */
  | ({
      readonly kind: "errorEvent";
      readonly afterEvents: number;
      readonly type?: FakeErrorType;
      readonly message?: string;
    } & ReplyOptions);

export interface RecordedRequest {
  /** Arrival order, from 0. */
  readonly n: number;
  readonly method: string;
  readonly path: string;
  /** Header names are lower-case (Node's parsing). */
  readonly headers: IncomingHttpHeaders;
  /** The parsed JSON body; `{}` when it was not a JSON object. */
  readonly body: Readonly<Record<string, unknown>>;
  /** The text of every user message, joined by blank lines: handy for scripting on the prompt. */
  readonly userText: string;
  /** The behaviour that answered it. */
  readonly behaviour: Behaviour;
  /** SSE events written so far, pings included. */
  eventsSent: number;
  /** The client closed the connection before the response was complete (an abort, a timeout). */
  disconnected: boolean;
}

export type BehaviourFn = (request: RecordedRequest, n: number) => Behaviour;

/** A queue of behaviours (served in order, then {@link DEFAULT_BEHAVIOUR}) or a function of the request. */
export type Script = readonly Behaviour[] | BehaviourFn;

export interface FakeAnthropicOptions {
  readonly script?: Script;
  /** When set, requests must carry it as `x-api-key` or `Authorization: Bearer`, or get a 401. */
  readonly apiKey?: string;
}

export interface FakeAnthropic {
  /** The base URL to give the SDK (`baseURL`), e.g. `http://127.0.0.1:40123`. */
  readonly url: string;
  /** Every request received, in arrival order. */
  readonly requests: readonly RecordedRequest[];
  /** Replaces the script; a queue starts from its first entry. */
  setScript(script: Script): void;
  /** Stops the server, ending open and stalled streams; never waits on a client. */
  close(): Promise<void>;
}

export const DEFAULT_REPLY_TEXT = [
  "## Goal",
  "Finish the task the user asked for.",
  "",
  "## Constraints & Preferences",
  "(none)",
  "",
  "## Progress",
  "### Done",
  "(none)",
  "### In Progress",
  "(none)",
  "### Blocked",
  "(none)",
  "",
  "## Key Decisions",
  "(none)",
  "",
  "## Next Steps",
  "(none)",
  "",
  "## Critical Context",
  "(none)",
].join("\n");

export const DEFAULT_BEHAVIOUR: Behaviour = { kind: "reply" };

const STATUS_ERROR_TYPES: Readonly<Record<number, FakeErrorType>> = {
  400: "invalid_request_error",
  401: "authentication_error",
  403: "permission_error",
  404: "not_found_error",
  413: "request_too_large",
  429: "rate_limit_error",
  529: "overloaded_error",
};

const ERROR_TYPE_STATUS: Readonly<Record<FakeErrorType, number>> = {
  invalid_request_error: 400,
  authentication_error: 401,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  overloaded_error: 529,
};

const DEFAULT_ERROR_MESSAGES: Readonly<Record<FakeErrorType, string>> = {
  invalid_request_error: "Invalid request",
  authentication_error: "invalid x-api-key",
  permission_error: "Your API key does not have permission to use the specified resource.",
  not_found_error: "Not found",
  request_too_large: "Request exceeds the maximum allowed number of bytes.",
  rate_limit_error: "Number of request tokens has exceeded your per-minute rate limit",
  api_error: "Internal server error",
  overloaded_error: "Overloaded",
};

export async function startFakeAnthropic(options: FakeAnthropicOptions = {}): Promise<FakeAnthropic> {
  const requests: RecordedRequest[] = [];
  let script: Script = options.script ?? [];
  let queuePosition = 0;
  /** Ends every stream that is waiting (stalled, silent, between delayed events) when the server closes. */
  const shutdown = new AbortController();
  // Every waiting stream listens on it; hundreds at once is normal in the service tests.
  setMaxListeners(0, shutdown.signal);

  const nextBehaviour = (request: Omit<RecordedRequest, "behaviour">): Behaviour => {
    if (typeof script === "function") return script(request as RecordedRequest, request.n);
    const queued = script[queuePosition];
    if (queued === undefined) return DEFAULT_BEHAVIOUR;
    queuePosition++;
    return queued;
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("error", () => res.destroy());
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const n = requests.length;
      const path = new URL(req.url ?? "/", "http://fake").pathname;
      const requestId = `req_fake${String(n).padStart(6, "0")}`;
      res.setHeader("request-id", requestId);

      if (req.method !== "POST" || path !== "/v1/messages") {
        sendError(res, 404, "not_found_error", `${req.method} ${path} not found`, requestId);
        return;
      }
      if (options.apiKey !== undefined && !authorized(req.headers, options.apiKey)) {
        sendError(res, 401, "authentication_error", DEFAULT_ERROR_MESSAGES.authentication_error, requestId);
        return;
      }
      const body = parseBody(Buffer.concat(chunks).toString("utf8"));
      if (body === undefined) {
        sendError(res, 400, "invalid_request_error", "The request body is not valid JSON.", requestId);
        return;
      }
      if (holdsLoneSurrogate(body)) {
        // The API's words for a `\ud800` escape (which JSON.stringify writes for a lone surrogate) with no pair.
        sendError(res, 400, "invalid_request_error", "The request body is not valid JSON: no low surrogate in string", requestId);
        return;
      }

      const partial = {
        n,
        method: req.method,
        path,
        headers: req.headers,
        body,
        userText: userText(body),
        eventsSent: 0,
        disconnected: false,
      };
      const recorded: RecordedRequest = { ...partial, behaviour: nextBehaviour(partial) };
      requests.push(recorded);
      res.on("close", () => {
        if (!res.writableFinished) recorded.disconnected = true;
      });
      void answer(recorded, res, requestId, shutdown.signal).catch(() => {
        // The client left mid-answer; nothing is waiting for this promise.
        res.destroy();
      });
    });
  });

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    setScript(next) {
      script = next;
      queuePosition = 0;
    },
    async close() {
      shutdown.abort();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}

async function answer(
  request: RecordedRequest,
  res: ServerResponse,
  requestId: string,
  shutdown: AbortSignal,
): Promise<void> {
  const b = request.behaviour;
  const streaming = request.body["stream"] === true;

  switch (b.kind) {
    case "error": {
      const type = b.type ?? STATUS_ERROR_TYPES[b.status] ?? (b.status >= 500 ? "api_error" : "invalid_request_error");
      const retryAfterMs = b.retryAfterMs === undefined ? 1 : b.retryAfterMs;
      const headers: Record<string, string> = { ...b.headers };
      if (retryAfterMs !== null) {
        headers["retry-after"] = String(Math.floor(retryAfterMs / 1000));
        headers["retry-after-ms"] = String(retryAfterMs);
      }
      sendError(res, b.status, type, b.message ?? DEFAULT_ERROR_MESSAGES[type], requestId, headers);
      return;
    }
    case "overflow": {
      const max = b.maxTokens ?? 200_000;
      const prompt = b.promptTokens ?? max + 12_345;
      sendError(res, 400, "invalid_request_error", `prompt is too long: ${prompt} tokens > ${max} maximum`, requestId);
      return;
    }
    case "silent":
      await untilGone(res, shutdown);
      return;
    case "keepAlive":
      if (streaming) await keepAlive(request, res, b, shutdown);
      else await untilGone(res, shutdown);
      return;
    case "reply":
      if (streaming) await stream(request, res, b, Infinity, shutdown);
      else sendJSON(res, 200, messageObject(request, b, true));
      return;
    case "stall":
      if (streaming) await stream(request, res, b, b.afterEvents ?? 0, shutdown);
      await untilGone(res, shutdown);
      return;
    case "cutOff":
      if (streaming) await stream(request, res, b, b.afterEvents, shutdown);
      if (b.how === "end" && streaming) res.end();
      else res.destroy();
      return;
    case "errorEvent": {
      const type = b.type ?? "overloaded_error";
      const message = b.message ?? DEFAULT_ERROR_MESSAGES[type];
      if (!streaming) {
        sendError(res, ERROR_TYPE_STATUS[type], type, message, requestId);
        return;
      }
      await stream(request, res, b, b.afterEvents, shutdown);
      if (!writable(res)) return;
      writeEvent(res, request, "error", errorBody(type, message, requestId));
      res.end();
      return;
    }
  }
}

/**
 * Writes the reply's SSE events, at most `limit` of them, and ends the
 * response only when the whole sequence was sent.
 */
async function stream(
  request: RecordedRequest,
  res: ServerResponse,
  reply: ReplyOptions,
  limit: number,
  shutdown: AbortSignal,
): Promise<void> {
  res.writeHead(200, {
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache",
    connection: "keep-alive",
  });
  // Headers go out now, before any event: a stalled stream must look connected.
  res.flushHeaders();

  const events = streamEvents(request, reply);
  const sent = Math.min(limit, events.length);
  const delayMs = reply.delayMs ?? 0;
  const started = performance.now();
  for (let i = 0; i < sent; i++) {
    if (i > 0 && delayMs > 0) await pause(reply.onSchedule === true ? started + i * delayMs - performance.now() : delayMs, shutdown);
    if (!writable(res) || shutdown.aborted) return;
    const [name, data] = events[i]!;
    writeEvent(res, request, name, data);
  }
  if (sent === events.length) res.end();
}

/** `message_start`, then a ping or a comment every `everyMs` until the client or the server goes. */
async function keepAlive(
  request: RecordedRequest,
  res: ServerResponse,
  b: { readonly everyMs: number; readonly with?: "ping" | "comment" },
  shutdown: AbortSignal,
): Promise<void> {
  res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache", connection: "keep-alive" });
  writeEvent(res, request, "message_start", { type: "message_start", message: messageObject(request, {}, false) });
  while (writable(res) && !shutdown.aborted) {
    await pause(b.everyMs, shutdown);
    if (!writable(res) || shutdown.aborted) return;
    if (b.with === "comment") res.write(": keep-alive\n\n");
    else writeEvent(res, request, "ping", { type: "ping" });
  }
}

type SseEvent = readonly [name: string, data: unknown];

/** The event sequence of one streamed message, as the API sends it. */
function streamEvents(request: RecordedRequest, reply: ReplyOptions): SseEvent[] {
  const message = messageObject(request, reply, false);
  const text = reply.text ?? DEFAULT_REPLY_TEXT;
  const events: SseEvent[] = [["message_start", { type: "message_start", message }]];
  for (let i = 0; i < (reply.pings ?? 1); i++) events.push(["ping", { type: "ping" }]);

  let index = 0;
  if (reply.thinking !== undefined) {
    events.push(["content_block_start", { type: "content_block_start", index, content_block: { type: "thinking", thinking: "", signature: "" } }]);
    for (const piece of split(reply.thinking, reply.thinkingChunks ?? 1)) {
      events.push(["content_block_delta", { type: "content_block_delta", index, delta: { type: "thinking_delta", thinking: piece } }]);
    }
    events.push(["content_block_delta", { type: "content_block_delta", index, delta: { type: "signature_delta", signature: "c2lnbmF0dXJl" } }]);
    events.push(["content_block_stop", { type: "content_block_stop", index }]);
    index++;
  }
  events.push(["content_block_start", { type: "content_block_start", index, content_block: { type: "text", text: "" } }]);
  for (const piece of split(text, reply.chunks ?? 1)) {
    events.push(["content_block_delta", { type: "content_block_delta", index, delta: { type: "text_delta", text: piece } }]);
  }
  events.push(["content_block_stop", { type: "content_block_stop", index }]);
  events.push([
    "message_delta",
    {
      type: "message_delta",
      delta: { stop_reason: stopReasonOf(reply), stop_sequence: null },
      usage: { output_tokens: outputTokensOf(reply) },
    },
  ]);
  events.push(["message_stop", { type: "message_stop" }]);
  return events;
}

/**
 * The Message object: complete for a JSON response, or the empty shell that
 * `message_start` carries (no content, no stop reason, one output token).
 */
function messageObject(request: RecordedRequest, reply: ReplyOptions, complete: boolean): Record<string, unknown> {
  const content: unknown[] = [];
  if (complete && reply.thinking !== undefined) {
    content.push({ type: "thinking", thinking: reply.thinking, signature: "c2lnbmF0dXJl" });
  }
  if (complete) content.push({ type: "text", text: reply.text ?? DEFAULT_REPLY_TEXT });
  return {
    id: `msg_fake${String(request.n).padStart(6, "0")}`,
    type: "message",
    role: "assistant",
    model: typeof request.body["model"] === "string" ? request.body["model"] : "unknown",
    content,
    stop_reason: complete ? stopReasonOf(reply) : null,
    stop_sequence: null,
    usage: {
      input_tokens: reply.inputTokens ?? Math.ceil(JSON.stringify(request.body).length / 4),
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      output_tokens: complete ? outputTokensOf(reply) : 1,
      service_tier: "standard",
    },
  };
}

function stopReasonOf(reply: ReplyOptions): string | null {
  return reply.stopReason === undefined ? "end_turn" : reply.stopReason;
}

function outputTokensOf(reply: ReplyOptions): number {
  return reply.outputTokens ?? Math.ceil(((reply.thinking ?? "").length + (reply.text ?? DEFAULT_REPLY_TEXT).length) / 4);
}

/** Splits text into `parts` pieces of near-equal length, never inside a surrogate pair. */
function split(text: string, parts: number): string[] {
  const chars = Array.from(text);
  const count = Math.max(1, Math.min(Math.floor(parts), chars.length || 1));
  const size = Math.ceil(chars.length / count);
  const pieces: string[] = [];
  for (let i = 0; i < count; i++) pieces.push(chars.slice(i * size, (i + 1) * size).join(""));
  return pieces;
}

function writeEvent(res: ServerResponse, request: RecordedRequest, name: string, data: unknown): void {
  res.write(`event: ${name}\ndata: ${JSON.stringify(data)}\n\n`);
  request.eventsSent++;
}

function errorBody(type: FakeErrorType, message: string, requestId: string): unknown {
  return { type: "error", error: { type, message }, request_id: requestId };
}

function sendError(
  res: ServerResponse,
  status: number,
  type: FakeErrorType,
  message: string,
  requestId: string,
  headers: Readonly<Record<string, string>> = {},
): void {
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  sendJSON(res, status, errorBody(type, message, requestId));
}

function sendJSON(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

function writable(res: ServerResponse): boolean {
  return !res.destroyed && !res.writableEnded;
}

/** Resolves when the client has gone or the server is closing. */
function untilGone(res: ServerResponse, shutdown: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (res.destroyed || shutdown.aborted) return resolve();
    const done = (): void => {
      res.off("close", done);
      shutdown.removeEventListener("abort", done);
      resolve();
    };
    res.once("close", done);
    shutdown.addEventListener("abort", done, { once: true });
  });
}

/** Waits `ms` (none when it is not positive), or less when the server is closing. */
async function pause(ms: number, shutdown: AbortSignal): Promise<void> {
  if (ms > 0) await sleep(ms, undefined, { signal: shutdown }).catch(() => undefined);
}

function authorized(headers: IncomingHttpHeaders, apiKey: string): boolean {
  return headers["x-api-key"] === apiKey || headers.authorization === `Bearer ${apiKey}`;
}

function parseBody(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return undefined;
  }
}

/**
 * Whether a string anywhere in the body (a key or a value) holds a surrogate
 * with no partner. JSON allows the escape, but the text is not Unicode: it has
 * no UTF-8 encoding, which is what the API checks, so the request is refused
 * (and refused again on every retry: it is not a passing fault).
 */
function holdsLoneSurrogate(value: unknown): boolean {
  if (typeof value === "string") return Buffer.from(value, "utf8").toString("utf8") !== value;
  if (typeof value !== "object" || value === null) return false;
  return Object.entries(value).some(([key, item]) => holdsLoneSurrogate(key) || holdsLoneSurrogate(item));
}

function userText(body: Readonly<Record<string, unknown>>): string {
  const messages = Array.isArray(body["messages"]) ? (body["messages"] as unknown[]) : [];
  const texts: string[] = [];
  for (const message of messages) {
    if (typeof message !== "object" || message === null) continue;
    const { role, content } = message as { role?: unknown; content?: unknown };
    if (role !== "user") continue;
    if (typeof content === "string") texts.push(content);
    else if (Array.isArray(content)) {
      for (const block of content as unknown[]) {
        const text = (block as { text?: unknown } | null)?.text;
        if (typeof text === "string") texts.push(text);
      }
    }
  }
  return texts.join("\n\n");
}
