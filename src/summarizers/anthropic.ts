/**
 * The summarizer that asks a Claude model, through `@anthropic-ai/sdk`.
 *
 * It only sends the prompt the core built and reports how generation ended.
 * Everything about when to give up lives in the core's compactor (the stall
 * watchdog, the two-attempt budget, rejecting truncated or empty summaries,
 * the degraded fallback): this file's job is to make those decisions possible
 * by reporting progress faithfully, stopping when told to, and never passing
 * off an unfinished summary as a finished one.
 */
import Anthropic, { AnthropicError, APIUserAbortError, type Middleware } from "@anthropic-ai/sdk";
import type { MessageDeltaUsage, RawMessageStreamEvent, Usage } from "@anthropic-ai/sdk/resources/messages";
import { SummaryRefusedError, SummaryUnfinishedError } from "../core/errors.js";
import type { SummarizationRequest, SummarizationResponse, Summarizer } from "../core/summarizer.js";
import { createNodeHttpFetch, reportingServerSentEvents } from "../http/nodeHttpFetch.js";
import { sseEventCounter } from "../http/sseEventCounter.js";

/**
 * The model used when none is configured (`--model`, `COMPACTD_MODEL`).
 *
 * Claude Sonnet 5.5: the current Sonnet in SDK 1.14's model list and not on
 * its deprecation list. Summaries decide what the agent still knows after
 * compaction (the user's constraints, the exact error text), which is worth a
 * stronger model than the cheapest; Opus would cost several times more for a
 * task that is reading and condensing, not reasoning.
 */
export const DEFAULT_MODEL = "claude-sonnet-5-5";

export interface AnthropicSummarizerOptions {
  /** Defaults to the SDK's resolution (`ANTHROPIC_API_KEY`). Ignored when `client` is given. */
  readonly apiKey?: string;
  /**
   * An Anthropic-compatible endpoint. Defaults to the SDK's resolution
   * (`ANTHROPIC_BASE_URL`, then the Anthropic API). Ignored when `client` is given.
   */
  readonly baseURL?: string;
  readonly model: string;
  /**
   * SDK retries of one attempt, for 408, 409, 429 and 5xx (529 included)
   * responses and connection errors, honouring `retry-after`. Default 2.
   * Errors in the middle of a stream are not retried by the SDK; the
   * compactor's second attempt covers those.
   */
  readonly maxRetries?: number;
  /**
   * How long one HTTP attempt may wait for response headers (the SDK's
   * `timeout`; default 10 minutes). A stream that goes quiet after its
   * headers is the compactor's stall watchdog's business, not this one's.
   */
  readonly timeoutMs?: number;
  /** A ready client (shared connection pools, custom fetch). `maxRetries` and `timeoutMs` still apply when set. */
  readonly client?: Anthropic;
}

/** Clients made by {@link createAnthropicClient}, which send over node:http. */
const NODE_HTTP_CLIENTS = new WeakSet<Anthropic>();

/**
 * An SDK client that sends over `node:http` (nodeHttpFetch.ts) rather than
 * Node's fetch, for the summarizers compactd builds: the CLI's, each worker's
 * shared one. Options left undefined take the SDK's resolution
 * (`ANTHROPIC_API_KEY`, `ANTHROPIC_BASE_URL`, its default retries).
 */
export function createAnthropicClient(options: { readonly apiKey?: string | undefined; readonly baseURL?: string | undefined; readonly maxRetries?: number }): Anthropic {
  const client = new Anthropic({
    ...(options.apiKey !== undefined && { apiKey: options.apiKey }),
    ...(options.baseURL !== undefined && { baseURL: options.baseURL }),
    ...(options.maxRetries !== undefined && { maxRetries: options.maxRetries }),
    fetch: createNodeHttpFetch(),
  });
  NODE_HTTP_CLIENTS.add(client);
  return client;
}

export function createAnthropicSummarizer(options: AnthropicSummarizerOptions): Summarizer {
  const model = checkModel(options.model);
  const maxRetries = checkCount("maxRetries", options.maxRetries);
  const timeoutMs = checkPositive("timeoutMs", options.timeoutMs);

  const client = options.client ?? createAnthropicClient({ apiKey: options.apiKey, baseURL: options.baseURL });

  // A client made here reports its stream's events from its own fetch, and lets go of a text body once sent.
  const overNodeHttp = NODE_HTTP_CLIENTS.has(client);
  // Another sends with Node's fetch, which keeps a text body as long as the response streams.
  // A subclass (Bedrock, Vertex) may sign the body in `prepareRequest`, which runs after middleware and must see the text.
  const sendsBodyAsStream = !overNodeHttp && Object.getPrototypeOf(client) === Anthropic.prototype;

  return {
    name: "anthropic",
    model,
    async summarize(request: SummarizationRequest): Promise<SummarizationResponse> {
      /*
       * The request carries exactly model, max_tokens, system and one user
       * message. No temperature, top_p or top_k: the API version this SDK
       * speaks rejects them, and the default sampling summarizes well.
       */
      const stream = await client.messages.create(
        {
          model,
          max_tokens: request.maxTokens,
          system: request.system,
          messages: [{ role: "user", content: request.prompt }],
          stream: true,
        },
        {
          signal: request.signal,
          ...(overNodeHttp
            ? { fetchOptions: reportingServerSentEvents(request.onProgress), middleware: [waitsBetweenAttempts(request.onProgress, request.onWaiting)] }
            : {
                middleware: [waitsBetweenAttempts(request.onProgress, request.onWaiting), reportEachEvent(request.onProgress), ...(sendsBodyAsStream ? [bodyLetGoOnceSent] : [])],
              }),
          ...(maxRetries !== undefined && { maxRetries }),
          ...(timeoutMs !== undefined && { timeout: timeoutMs }),
        },
      );
      // SDK errors are thrown untouched: the core's overflow detection reads their status and body.
      const summary = await readSummary(stream, request.signal);

      return {
        text: summary.text,
        truncated: endingOf(summary.stopReason, model) === "truncated",
        stopReason: summary.stopReason ?? undefined,
        usage: { inputTokens: summary.inputTokens, outputTokens: summary.outputTokens },
      };
    },
  };
}

/** What a summary's event stream said, gathered as it arrived. */
interface StreamedSummary {
  /** The text of its text blocks, in order (thinking is not summary). */
  readonly text: string;
  readonly stopReason: string | null;
  /** Input tokens, cached input included: the core calibrates its estimates against this total. */
  readonly inputTokens: number;
  readonly outputTokens: number;
}

/**
 * Reads the events of `create({stream: true})` into the summary, keeping
 * only the text and the counts, where the SDK's `messages.stream()` helper
 * kept a snapshot of the whole message and an emitter of every event (and,
 * with summaries streaming for seconds, left more for full collections to
 * free; docs/BENCHMARKS.md, Service). Two things that helper did are done
 * here. A stream the signal aborted ends its loop quietly in the SDK, and
 * the text so far would look whole: it rejects with `APIUserAbortError`
 * instead. A stream that ends without `message_stop` (a connection dropped
 * by a proxy, a server that gave up) rejects too, rather than pass off a
 * summary that was cut short.
 */
async function readSummary(stream: AsyncIterable<RawMessageStreamEvent>, signal: AbortSignal): Promise<StreamedSummary> {
  const textBlocks = new Set<number>();
  const text: string[] = [];
  let stopReason: string | null = null;
  let usage: Usage | undefined;
  let stopped = false;
  try {
    for await (const event of stream) {
      switch (event.type) {
        case "message_start":
          usage = { ...event.message.usage };
          break;
        case "content_block_start":
          if (event.content_block.type === "text") {
            textBlocks.add(event.index);
            text.push(event.content_block.text);
          }
          break;
        case "content_block_delta":
          if (event.delta.type === "text_delta" && textBlocks.has(event.index)) text.push(event.delta.text);
          break;
        case "message_delta":
          stopReason = event.delta.stop_reason;
          if (usage !== undefined) usage = withDelta(usage, event.usage);
          break;
        case "message_stop":
          stopped = true;
          break;
      }
    }
  } catch (err) {
    throw asAnthropicError(err, signal);
  }
  if (signal.aborted) throw new APIUserAbortError();
  if (!stopped || usage === undefined) throw new AnthropicError("the summary's stream ended before message_stop");
  return {
    text: text.join(""),
    stopReason,
    inputTokens: usage.input_tokens + (usage.cache_creation_input_tokens ?? 0) + (usage.cache_read_input_tokens ?? 0),
    outputTokens: usage.output_tokens,
  };
}

/**
 * A failure while the stream is read, as the SDK's stream helper reported
 * it: an abort as `APIUserAbortError`, anything else that is not already the
 * SDK's (a connection reset, a body cut off) as an `AnthropicError` with the
 * original as its cause.
 */
function asAnthropicError(err: unknown, signal: AbortSignal): unknown {
  if (err instanceof AnthropicError) return err;
  if (signal.aborted || (err instanceof Error && err.name === "AbortError")) return new APIUserAbortError();
  return err instanceof Error ? new AnthropicError(err.message, { cause: err }) : new AnthropicError(String(err));
}

/** The usage a `message_delta` reports: output so far, and input counts when it restates them. */
function withDelta(usage: Usage, delta: MessageDeltaUsage): Usage {
  return {
    ...usage,
    output_tokens: delta.output_tokens,
    ...(delta.input_tokens != null && { input_tokens: delta.input_tokens }),
    ...(delta.cache_creation_input_tokens != null && { cache_creation_input_tokens: delta.cache_creation_input_tokens }),
    ...(delta.cache_read_input_tokens != null && { cache_read_input_tokens: delta.cache_read_input_tokens }),
  };
}

/**
 * What a stop reason says of the text before it. Only a natural stop
 * (`end_turn`, `stop_sequence`) vouches for a whole summary; `max_tokens`
 * cut it off at the cap; `model_context_window_exceeded` says the request
 * did not fit, which the compactor reads off the stop reason itself. Anything
 * else is not a summary at all and throws: `refusal` as
 * {@link SummaryRefusedError}, and `pause_turn`, `tool_use` (senseless for a
 * tool-less request), a missing stop reason or one this code does not know as
 * {@link SummaryUnfinishedError}. Calling those truncated would send an
 * operator to raise a cap that is not the problem.
 */
function endingOf(stopReason: string | null, model: string): "finished" | "truncated" | "overflow" {
  switch (stopReason) {
    case "end_turn":
    case "stop_sequence":
      return "finished";
    case "max_tokens":
      return "truncated";
    case "model_context_window_exceeded":
      return "overflow";
    case "refusal":
      throw new SummaryRefusedError(model);
    default:
      throw new SummaryUnfinishedError(stopReason);
  }
}

/**
 * The longest wait between two attempts of one call that compactd takes from
 * a provider's `retry-after`: a minute. SDK 1.x sleeps for whatever the
 * header asks, up to 2^31 ms (24 days), and the stall watchdog rightly stops
 * while it does; a 429 asking for an hour would then hold a CLI run (or a
 * worker's slot) silent for an hour per retry. A provider asking for longer
 * is not coming back soon: the call fails at once with its error, and the
 * compactor degrades (the worker retries the job later with its own backoff).
 */
const LONGEST_RETRY_AFTER_MS = 60_000;

/**
 * Tells the stall watchdog when the SDK waits between two attempts of one
 * call, for a client of either kind. An attempt that failed (a 429 or 529
 * answered with `retry-after`, a 5xx, a dropped connection) is followed by
 * the SDK's wait before the next one, up to {@link LONGEST_RETRY_AFTER_MS}
 * as the API asks (a longer one is refused: {@link waitAskedForMs}): with no
 * stream open, that silence is the provider's request, not a stall, so
 * `onWaiting` stops the watchdog. The next attempt's sending calls
 * `onProgress`, and the watchdog covers its wait for headers and events as it
 * did the first's. (An attempt the SDK does not retry ends the call at once;
 * the watchdog has nothing left to watch.)
 */
function waitsBetweenAttempts(onProgress: () => void, onWaiting: () => void): Middleware {
  let waiting = false;
  const waitForTheNext = (): void => {
    waiting = true;
    onWaiting();
  };
  return async (attempt, next) => {
    if (waiting) {
      waiting = false;
      onProgress();
    }
    let response: Response;
    try {
      response = await next(attempt);
    } catch (err) {
      waitForTheNext();
      throw err;
    }
    if (response.ok) return response;
    if ((waitAskedForMs(response.headers) ?? 0) > LONGEST_RETRY_AFTER_MS) return withoutRetry(response);
    waitForTheNext();
    return response;
  };
}

/**
 * How long a failed response asks the client to wait before its next attempt,
 * read as the SDK reads it: `retry-after-ms`, else `retry-after` in seconds
 * or as an HTTP date. Undefined when it asks nothing readable (the SDK then
 * backs off by itself, for at most 8 s).
 */
function waitAskedForMs(headers: Headers): number | undefined {
  const millis = Number.parseFloat(headers.get("retry-after-ms") ?? "");
  if (millis > 0) return millis;
  const retryAfter = headers.get("retry-after");
  if (retryAfter === null) return undefined;
  const seconds = Number.parseFloat(retryAfter);
  if (!Number.isNaN(seconds)) return seconds * 1000;
  const date = Date.parse(retryAfter);
  return Number.isNaN(date) ? undefined : date - Date.now();
}

/** The response as the SDK's retry policy reads one it must not retry (`x-should-retry: false`): its error goes to the caller at once. */
function withoutRetry(response: Response): Response {
  const headers = new Headers(response.headers);
  headers.set("x-should-retry", "false");
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
}

/**
 * Calls `onProgress` once per server-sent event of content, for a client not
 * made by {@link createAnthropicClient} (compactd's own clients report events
 * from their fetch: {@link reportingServerSentEvents}).
 *
 * The SDK consumes the stream itself, so progress is read off the response
 * body, one call per completed event (the blank line that ends it) that has
 * data and is not a `ping`: a ping says the connection is open, not that the
 * model is producing, and a stream of nothing but pings is a stall. A model
 * thinking before its first visible token streams its thinking as events,
 * which count. Headers alone never count: this runs only as body bytes arrive.
 *
 * The request's abort signal ends the body here too, whatever fetch the
 * client sends with. Node's fetch (undici 6, Node 20 and 22; a given client's
 * default) follows that signal through a request object that only the
 * pending response headers keep alive when it sends the request itself (as
 * {@link bodyLetGoOnceSent} has it do): once they arrive, a garbage
 * collection can take that object, and an abort would no longer reach a
 * response already streaming, leaving a stalled or cancelled call waiting
 * forever. Piping with the signal cancels the response body, and so the
 * connection, whatever fetch still holds.
 */
function reportEachEvent(onProgress: () => void): Middleware {
  return async (request, next) => {
    const response = await next(request);
    if (!response.ok || response.body === null) return response;
    const signal = request.signal ?? undefined;
    return new Response(response.body.pipeThrough(sseEventCounter(onProgress), signal === undefined ? {} : { signal }), response);
  };
}

/**
 * For a client not made by {@link createAnthropicClient}, which sends with
 * Node's fetch (compactd's own clients send with {@link createNodeHttpFetch},
 * which lets go of a text body once written): sends the request's JSON as a
 * stream of its bytes, with their length. Given the text itself, fetch keeps
 * it as the body's source for as long as the response streams, which is the whole summary: a second copy of the
 * prompt (two bytes a character when the transcript is not all Latin-1) per
 * call in flight. A stream's bytes are let go of once sent, so a worker with
 * hundreds of summaries in flight holds each prompt once (see "Memory per
 * job in flight" in docs/OPERATIONS.md). An SDK retry builds its request
 * again and comes through here again.
 *
 * Only if fetch sends the request itself: for any request that may follow a
 * redirect, or that came from a window, fetch sends a clone, and cloning a
 * stream body tees it, so the original request's branch, never read, queues
 * every byte sent until the response ends. `redirect: "error"` with no
 * window is the one case the Fetch standard sends as is. Nothing is lost: the
 * Messages API does not redirect, and a stream body could not be sent again
 * to follow a 307 or 308 anyway.
 */
const bodyLetGoOnceSent: Middleware = async (request, next) => {
  if (typeof request.body !== "string") return next(request);
  let bytes: Uint8Array | undefined = Buffer.from(request.body, "utf8");
  request.headers.set("content-length", String(bytes.byteLength));
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (bytes !== undefined) controller.enqueue(bytes);
      bytes = undefined;
      controller.close();
    },
  });
  return next({ ...request, body, duplex: "half", redirect: "error", window: null });
};

function checkModel(model: unknown): string {
  if (typeof model !== "string" || model.trim() === "") {
    throw new TypeError("anthropic summarizer: model must be a non-empty model id");
  }
  return model;
}

function checkCount(field: string, value: number | undefined): number | undefined {
  if (value !== undefined && !(Number.isInteger(value) && value >= 0)) {
    throw new TypeError(`anthropic summarizer: ${field} must be a whole number >= 0, got ${String(value)}`);
  }
  return value;
}

function checkPositive(field: string, value: number | undefined): number | undefined {
  if (value !== undefined && !(Number.isFinite(value) && value > 0)) {
    throw new TypeError(`anthropic summarizer: ${field} must be a number > 0, got ${String(value)}`);
  }
  return value;
}
