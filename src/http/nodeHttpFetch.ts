/**
 * The `fetch` compactd sends with, wherever it sends a large body: handed to
 * the Anthropic SDK for summarizer calls, and the agent-side client's
 * default. Requests go out with `node:http` and `node:https` over kept-alive
 * connections, the response handed back as a standard `Response` whose body
 * streams as it arrives.
 *
 * Why not Node's own fetch (undici): what its requests leave behind is held
 * through weak references and finalization registries, which V8's
 * young-generation collections treat as strong, so each summary in flight at
 * a scavenge is promoted into the old generation and freed only by a full
 * mark-compact (docs/BENCHMARKS.md, Service, for what that costs a worker);
 * and it costs more CPU a request: a 100 KB submission through compactd's
 * client took 1.49 ms of the agent's CPU with it and 1.04 with this
 * (`npm run bench:client`).
 *
 * It supports what the SDK and the client send: a URL, a method, headers,
 * and a body that is text, bytes or a byte stream. Responses are asked for uncompressed
 * (`accept-encoding: identity`): a stream of server-sent events gains little
 * from compression and would lose its event-by-event progress to a
 * decompressor's buffering. An endpoint that compresses all the same (some
 * Anthropic-compatible gateways) is decoded, as Node's fetch would. Redirects
 * are not followed, and the caller gets the 3xx: neither the Messages API nor
 * compactd's sends one, and fetch follows a 301 or 302 answered to a POST as a GET.
 */
import type { ClientOptions } from "@anthropic-ai/sdk";
import { Agent as HttpAgent, request as httpRequest, type ClientRequest, type IncomingMessage } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import { pipeline, Readable, type Transform } from "node:stream";
import { createBrotliDecompress, createGunzip, createInflate } from "node:zlib";
import type { ReadableStream as NodeReadableStream } from "node:stream/web";
import { sseEventScanner } from "./sseEventCounter.js";

/**
 * Where a request's init may carry a listener for the server-sent events of
 * its response body (see {@link reportingServerSentEvents}).
 */
const SERVER_SENT_EVENT_LISTENER = Symbol("compactd.serverSentEventListener");

/**
 * Request options (the SDK's per-request `fetchOptions`, which reach this
 * fetch as part of its init) that have `onEvent` called at the end of every
 * server-sent event of a successful response's body that carries data and is
 * not a keep-alive `ping` (see sseEventCounter.ts), as the bytes arrive. The
 * summarizer's stall watchdog needs exactly that, and for
 * a client sending with this fetch it is had here, on the bytes Node hands
 * over, rather than through a web stream stage and the SDK's middleware
 * chain, which together cost a summarizer call about a quarter of a
 * millisecond of CPU more (docs/BENCHMARKS.md, Service).
 */
export function reportingServerSentEvents(onEvent: () => void): FetchOptions {
  return { [SERVER_SENT_EVENT_LISTENER]: onEvent } as FetchOptions;
}

/** What the SDK takes as a request's `fetchOptions`. */
type FetchOptions = NonNullable<ClientOptions["fetchOptions"]>;

function serverSentEventListenerOf(init: RequestInit): (() => void) | undefined {
  const listener = (init as { [SERVER_SENT_EVENT_LISTENER]?: unknown })[SERVER_SENT_EVENT_LISTENER];
  return typeof listener === "function" ? (listener as () => void) : undefined;
}

/** Statuses whose response has no body by definition; `Response` refuses one for them. */
const NULL_BODY_STATUSES = new Set([204, 205, 304]);

/** A `fetch` over `node:http(s)`, with its own pools of kept-alive connections. */
export function createNodeHttpFetch(): typeof fetch {
  const agents = { http: new HttpAgent({ keepAlive: true }), https: new HttpsAgent({ keepAlive: true }) };
  return async (input, init = {}) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    if (url.protocol !== "http:" && url.protocol !== "https:") throw new TypeError(`fetch: unsupported protocol ${url.protocol}`);
    init.signal?.throwIfAborted();
    const request = sendRequest(url, init, url.protocol === "https:" ? agents.https : agents.http);
    return responseTo(request, init.signal ?? undefined, serverSentEventListenerOf(init));
  };
}

/**
 * Opens the request and writes its body. No closure that outlives the write
 * captures the body, so a prompt is let go of once it is sent rather than
 * held while the summary streams.
 */
function sendRequest(url: URL, init: RequestInit, agent: HttpAgent): ClientRequest {
  const body = requestBody(init.body);
  const headers = Object.fromEntries(new Headers(init.headers));
  headers["accept-encoding"] = "identity";
  if (body instanceof Uint8Array) headers["content-length"] = String(body.byteLength);
  const options = { method: init.method ?? "GET", headers, agent };
  const request = url.protocol === "https:" ? httpsRequest(url, options) : httpRequest(url, options);
  if (body instanceof ReadableStream) {
    Readable.fromWeb(body as NodeReadableStream<Uint8Array>).pipe(request);
  } else {
    request.end(body);
  }
  return request;
}

/** The response, once its headers arrive; an abort reaches the request before then and the body after. */
function responseTo(request: ClientRequest, signal: AbortSignal | undefined, onEvent: (() => void) | undefined): Promise<Response> {
  return new Promise<Response>((resolve, reject) => {
    let response: IncomingMessage | undefined;
    const onAbort = (): void => {
      request.destroy(signal!.reason as Error);
      response?.destroy(signal!.reason as Error);
    };
    const stopListening = (): void => signal?.removeEventListener("abort", onAbort);
    signal?.addEventListener("abort", onAbort, { once: true });
    request.once("response", (incoming) => {
      response = incoming;
      incoming.once("close", stopListening);
      resolve(responseOf(incoming, onEvent));
    });
    // `on`, not `once`: a socket may fail again after its first error, and an unheard error would end the process.
    request.on("error", (error) => {
      stopListening();
      // As Node's fetch reports it, so the SDK takes it for a connection error (and retries it).
      reject(signal?.aborted ? signal.reason : new TypeError("fetch failed", { cause: error }));
    });
  });
}

function requestBody(body: RequestInit["body"]): Uint8Array | ReadableStream<Uint8Array> | undefined {
  if (body === undefined || body === null) return undefined;
  // Text is encoded once, here: sent as text, its length would be measured
  // for the header and again by node:http, and encoded a third time into the
  // socket (a prompt is 100 KB and more; 68 µs a measuring).
  if (typeof body === "string") return Buffer.from(body, "utf8");
  if (body instanceof Uint8Array || body instanceof ReadableStream) return body;
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  throw new TypeError("fetch: the request body must be text, bytes or a byte stream");
}

function responseOf(incoming: IncomingMessage, onEvent: (() => void) | undefined): Response {
  const status = incoming.statusCode ?? 0;
  const headers = new Headers();
  for (const [name, value] of Object.entries(incoming.headers)) {
    if (value === undefined) continue;
    for (const each of Array.isArray(value) ? value : [value]) headers.append(name, each);
  }
  const init = { status, statusText: incoming.statusMessage ?? "", headers };
  if (NULL_BODY_STATUSES.has(status)) {
    incoming.resume();
    return new Response(null, init);
  }
  const decoder = decoderFor(headers.get("content-encoding"));
  let body: Readable = incoming;
  if (decoder !== undefined) {
    // What the body says once decoded: no encoding, and a length no longer known.
    headers.delete("content-encoding");
    headers.delete("content-length");
    // An error on either side (a reset connection, a corrupt stream) ends the decoded body with it.
    body = pipeline(incoming, decoder, () => undefined);
  }
  // Attached before the web stream's own listener, in the same tick: it sees every chunk, first.
  if (onEvent !== undefined && status >= 200 && status < 300) body.on("data", sseEventScanner(onEvent));
  return new Response(Readable.toWeb(body) as ReadableStream<Uint8Array>, init);
}

/** A decoder for the content codings Node's fetch decodes; undefined for none (or one it would pass through). */
function decoderFor(encoding: string | null): Transform | undefined {
  switch (encoding?.trim().toLowerCase()) {
    case "gzip":
    case "x-gzip":
      return createGunzip();
    case "deflate":
      return createInflate();
    case "br":
      return createBrotliDecompress();
    default:
      return undefined;
  }
}
