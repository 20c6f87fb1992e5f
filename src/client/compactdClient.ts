/**
 * The agent's side of the compaction service's HTTP API.
 *
 * It is deliberately thin: one method per endpoint, typed with the API's own
 * contract (apiTypes.ts, generated from the OpenAPI document), plus the two
 * things every caller would otherwise write again: retrying calls that failed
 * for a passing reason, and waiting for a job across the API's per-request
 * wait limit.
 */
import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { tooDeeplyNested } from "../core/formats/nestingDepth.js";
import { canonicalJson } from "../core/replaces.js";
import { createNodeHttpFetch } from "../http/nodeHttpFetch.js";
import type { Batch, BatchRequest, CompactionRequest, Job, NothingToCompact, Queued } from "./apiTypes.js";
import { apiKeyOf, baseUrlOf, checkItems, checkRequest, idempotencyKeyOf, idOf, numberOption, signalOf, waitOf } from "./clientArguments.js";
import { CompactdApiError, CompactdConnectionError } from "./clientErrors.js";
import { DEFAULT_RETRY_POLICY, RETRYABLE_STATUSES, retryDelayMs, type RetryPolicy } from "./retryPolicy.js";

/** The longest `?wait` one request may ask for: the API's limit (the `wait` parameter's maximum in its OpenAPI document). */
export const MAX_WAIT_PER_REQUEST_SECONDS = 60;

/** One item of {@link CompactdClient.batch}: a compaction request without its own callback. */
export type BatchItem = BatchRequest["items"][number];

export interface CompactdClientOptions {
  /** Where the API listens, e.g. `http://compactd:8080`, or `https://gateway/compactd` behind a gateway. */
  readonly baseUrl: string;
  /** A key from the service's COMPACTD_API_KEYS; it selects the tenant. */
  readonly apiKey: string;
  /**
   * Default: compactd's own fetch over `node:http` (src/http/nodeHttpFetch.ts),
   * one for every client of the process, which takes about two thirds of the
   * CPU Node's global fetch took to send a 100 KB conversation. Pass
   * `globalThis.fetch`, or any other, to send with that.
   */
  readonly fetch?: typeof fetch;
  /** Retries of one call after a connection error, a 503 or a 429. Default 3, at most 100. */
  readonly maxRetries?: number;
  /** The longest pause before a retry, and the longest `Retry-After` honoured. Default 30 s, at most an hour. */
  readonly maxRetryDelayMs?: number;
  /** How long one HTTP request may take, beyond any `wait` it asks the API for. Default 30 s, at most an hour. */
  readonly timeoutMs?: number;
}

export interface CompactOptions {
  /**
   * Seconds to wait for the job to finish, at most 3600. Without it `compact`
   * returns as soon as the job is queued (the result comes by webhook or by `get`).
   */
  readonly wait?: number;
  readonly signal?: AbortSignal;
  /**
   * Names this submission across processes, so an agent that restarts and
   * submits again gets the same job. Default: a fresh key per call, which
   * still makes the call's own retries safe.
   */
  readonly idempotencyKey?: string;
}

export interface GetOptions {
  /** Seconds to wait for the job to finish before answering with it as it is. Default 0, at most 3600. */
  readonly wait?: number;
  readonly signal?: AbortSignal;
}

export interface BatchOptions {
  /** Receives one `batch.completed` webhook when every item has finished. */
  readonly callbackUrl?: string;
  /** Any JSON object, echoed in the batch view and its webhook. */
  readonly metadata?: Record<string, unknown>;
  readonly signal?: AbortSignal;
  readonly idempotencyKey?: string;
}

interface Call {
  readonly body?: unknown;
  readonly idempotencyKey?: string;
  readonly signal?: AbortSignal;
  /** Seconds the API may hold the request (`?wait`), added to the timeout. */
  readonly waitSeconds?: number;
}

const DEFAULT_TIMEOUT_MS = 30_000;

/** The pause after a wait the API cut short, doubled each time in a row up to the most. */
const EARLY_ANSWER_PAUSE_MS = 1_000;
const MAX_EARLY_ANSWER_PAUSE_MS = 8_000;

const FINISHED: ReadonlySet<Job["status"]> = new Set(["completed", "failed", "cancelled"]);

/**
 * The default fetch, one for every client of the process: its kept-alive
 * connections are pooled per process, as Node's global fetch pools them, so
 * an agent that makes a client per request does not hold a pool per client.
 */
let defaultFetch: typeof fetch | undefined;
function sharedFetch(): typeof fetch {
  defaultFetch ??= createNodeHttpFetch();
  return defaultFetch;
}

export class CompactdClient {
  private readonly baseUrl: string;
  private readonly apiKey: string;
  private readonly fetch: typeof fetch;
  private readonly retry: RetryPolicy;
  private readonly timeoutMs: number;

  /** Throws a TypeError naming the option at fault (clientArguments.ts). */
  constructor(options: CompactdClientOptions) {
    this.baseUrl = baseUrlOf(options.baseUrl);
    this.apiKey = apiKeyOf(options.apiKey);
    this.fetch = options.fetch ?? sharedFetch();
    this.retry = {
      maxRetries: numberOption("maxRetries", options.maxRetries, DEFAULT_RETRY_POLICY.maxRetries),
      maxDelayMs: numberOption("maxRetryDelayMs", options.maxRetryDelayMs, DEFAULT_RETRY_POLICY.maxDelayMs),
    };
    this.timeoutMs = numberOption("timeoutMs", options.timeoutMs, DEFAULT_TIMEOUT_MS);
  }

  /**
   * Submits a compaction. Answers `nothing_to_compact` at once when nothing
   * lies outside the keep-recent budget (no job is queued); its
   * `stillAboveThreshold` says when the context is too large all the same,
   * which compacting again will not change. Otherwise the job
   * is queued and, with `wait`, followed until it finishes or `wait` seconds
   * have passed, whichever comes first.
   */
  compact(request: CompactionRequest, options?: CompactOptions & { readonly wait?: undefined }): Promise<NothingToCompact | Queued>;
  compact(request: CompactionRequest, options: CompactOptions & { readonly wait: number }): Promise<NothingToCompact | Job>;
  async compact(request: CompactionRequest, options: CompactOptions = {}): Promise<NothingToCompact | Queued | Job> {
    checkRequest(request, "");
    const signal = signalOf(options.signal);
    // The wait budget counts from now, so the submission's own retries spend it too.
    const deadline = options.wait === undefined ? undefined : Date.now() + waitOf(options.wait) * 1000;
    const submitted = await this.call<NothingToCompact | Queued>("POST", "/v1/compactions", {
      body: request,
      idempotencyKey: idempotencyKeyOf(options.idempotencyKey) ?? randomUUID(),
      ...(signal !== undefined && { signal }),
    });
    if (deadline === undefined || !("id" in submitted)) return submitted;
    return this.follow(submitted.id, deadline, signal);
  }

  /** A compaction's status and, once completed, its result. */
  async get(id: string, options: GetOptions = {}): Promise<Job> {
    return this.follow(idOf(id), Date.now() + waitOf(options.wait ?? 0) * 1000, signalOf(options.signal));
  }

  /** Cancels a queued compaction or aborts a running one; the job as it is after the request. */
  async cancel(id: string, options: { readonly signal?: AbortSignal } = {}): Promise<Job> {
    return this.call<Job>("DELETE", `/v1/compactions/${encodeURIComponent(idOf(id))}`, withSignal(options.signal));
  }

  /** Submits many compactions at once, with one webhook when all have finished. */
  async batch(items: readonly BatchItem[], options: BatchOptions = {}): Promise<Batch> {
    checkItems(items);
    const body: BatchRequest = {
      items,
      ...(options.callbackUrl !== undefined && { callbackUrl: options.callbackUrl }),
      ...(options.metadata !== undefined && { metadata: options.metadata }),
    };
    return this.call<Batch>("POST", "/v1/compactions/batch", {
      body,
      idempotencyKey: idempotencyKeyOf(options.idempotencyKey) ?? randomUUID(),
      ...withSignal(options.signal),
    });
  }

  /** A batch's items and counts by status. */
  async getBatch(id: string, options: { readonly signal?: AbortSignal } = {}): Promise<Batch> {
    return this.call<Batch>("GET", `/v1/batches/${encodeURIComponent(idOf(id))}`, withSignal(options.signal));
  }

  /**
   * Reads the job until it has finished or `deadline` has passed, each request
   * holding at most the API's per-request limit. Always reads at least once.
   *
   * An API process holds only so many waiting requests (COMPACTD_MAX_WAITERS)
   * and answers the rest at once with the job as it is, as does a proxy that
   * drops the query: a read answered before its wait ran out is followed by a
   * pause, growing while that lasts, so the client does not ask again in a
   * loop, hardest on an API that is already at its limit.
   */
  private async follow(id: string, deadline: number, signal: AbortSignal | undefined): Promise<Job> {
    for (let early = 0; ; ) {
      const wait = Math.min(MAX_WAIT_PER_REQUEST_SECONDS, Math.max(0, Math.ceil((deadline - Date.now()) / 1000)));
      const asked = Date.now();
      const job = await this.call<Job>("GET", `/v1/compactions/${encodeURIComponent(id)}?wait=${wait}`, {
        waitSeconds: wait,
        ...(signal !== undefined && { signal }),
      });
      const now = Date.now();
      if (FINISHED.has(job.status) || now >= deadline) return job;
      if (now - asked >= wait * 1000) {
        early = 0;
        continue;
      }
      await pause(Math.min(EARLY_ANSWER_PAUSE_MS * 2 ** early, MAX_EARLY_ANSWER_PAUSE_MS, deadline - now), signal);
      early++;
    }
  }

  /** One call: the request, its retries, and the answer's body; any other answer is thrown. */
  private async call<T>(method: string, path: string, call: Call): Promise<T> {
    const url = `${this.baseUrl}${path}`;
    const headers: Record<string, string> = { authorization: `Bearer ${this.apiKey}`, accept: "application/json" };
    if (call.body !== undefined) headers["content-type"] = "application/json";
    if (call.idempotencyKey !== undefined) headers["idempotency-key"] = call.idempotencyKey;
    const body = call.body === undefined ? undefined : requestJson(call.body);
    const timeoutMs = this.timeoutMs + (call.waitSeconds ?? 0) * 1000;

    for (let retry = 0; ; retry++) {
      let status: number;
      let text: string;
      let retryAfter: string | null;
      const timeout = AbortSignal.timeout(timeoutMs);
      try {
        const signal = call.signal === undefined ? timeout : AbortSignal.any([call.signal, timeout]);
        const response = await this.fetch(url, { method, headers, signal, ...(body !== undefined && { body }) });
        status = response.status;
        retryAfter = response.headers.get("retry-after");
        text = await response.text();
      } catch (err) {
        if (call.signal?.aborted === true) throw call.signal.reason;
        const delay = retryDelayMs(this.retry, retry, null);
        if (delay === undefined) throw new CompactdConnectionError(method, url, retry + 1, timeout.aborted ? timedOut(this.timeoutMs, call.waitSeconds ?? 0) : err);
        await pause(delay, call.signal);
        continue;
      }
      if (status >= 200 && status < 300) return parseBody<T>(status, text);
      const delay = RETRYABLE_STATUSES.has(status) ? retryDelayMs(this.retry, retry, retryAfter) : undefined;
      if (delay === undefined) throw CompactdApiError.fromResponse(status, text);
      await pause(delay, call.signal);
    }
  }
}

/** Why a request was given up: its timeout, named as the option a caller sets. */
function timedOut(timeoutMs: number, waitSeconds: number): Error {
  const of = waitSeconds === 0 ? "timeoutMs" : `timeoutMs ${timeoutMs} plus the ${waitSeconds} s it asked the API to wait`;
  return new Error(`no answer within ${timeoutMs + waitSeconds * 1000} ms (${of})`);
}

function parseBody<T>(status: number, text: string): T {
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new CompactdApiError(status, "invalid_response", `the service answered ${status} with a body that is not JSON`);
  }
}

/** The caller's signal, checked, as a call's option. */
function withSignal(signal: unknown): { readonly signal?: AbortSignal } {
  const checked = signalOf(signal);
  return checked === undefined ? {} : { signal: checked };
}

/** Sleeps; an abort ends the sleep with the caller's own reason, as an aborted request does. */
async function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  try {
    await sleep(ms, undefined, signal === undefined ? {} : { signal });
  } catch (err) {
    throw signal?.aborted === true ? signal.reason : err;
  }
}

/**
 * The request as JSON. A body nested deeper than the service accepts, or
 * holding itself, is refused here, naming the field, rather than by
 * `JSON.stringify` running out of stack or calling it circular.
 */
function requestJson(body: unknown): string {
  const tooDeep = tooDeeplyNested(body, "");
  if (tooDeep !== undefined) throw new TypeError(`${tooDeep.field}: ${tooDeep.problem}; the service refuses such requests`);
  try {
    return JSON.stringify(body);
  } catch (error) {
    // JSON.stringify says what it cannot write (a BigInt) but not where; the canonical writer, which writes what it writes, names the field.
    canonicalJson(body);
    throw error;
  }
}
