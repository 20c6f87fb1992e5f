import { request as httpRequest, type Agent } from "node:http";
import { request as httpsRequest } from "node:https";
import type { LookupFunction } from "node:net";
import { timerDelay } from "../core/timerDelay.js";
import type { CallbackOutcome } from "../metrics/metrics.js";
import type { CallbackAgents } from "./callbackAgents.js";
import { CallbackRefusedError } from "./guardedLookup.js";

/**
 * One POST of a signed callback, classified. `node:http(s)` rather than
 * `fetch`: only they take the guarded `lookup`, and they never follow
 * redirects (a redirect could point anywhere, including inside).
 */

export interface DeliveryRequest {
  readonly url: URL;
  readonly headers: Readonly<Record<string, string>>;
  /** The body's bytes, exactly as signed. */
  readonly body: Uint8Array;
  /** Bounds the whole exchange up to the response status. */
  readonly timeoutMs: number;
  readonly lookup: LookupFunction;
  readonly agents: CallbackAgents;
}

export interface DeliveryResult {
  readonly outcome: Exclude<CallbackOutcome, "abandoned">;
  /** For logs and the job's failure reason. */
  readonly detail: string;
}

class DeliveryTimeoutError extends Error {}

function outcomeOfStatus(status: number, location: string | undefined): DeliveryResult {
  if (status >= 200 && status < 300) return { outcome: "delivered", detail: `receiver answered ${status}` };
  // 410 is the receiver saying the subscription is over: stop, without error.
  if (status === 410) return { outcome: "gone", detail: "receiver answered 410 Gone" };
  if (status >= 300 && status < 400) {
    return { outcome: "redirected", detail: `receiver answered ${status} to ${location ?? "(no location)"}; redirects are not followed` };
  }
  return { outcome: "rejected", detail: `receiver answered ${status}` };
}

function outcomeOfError(error: unknown): DeliveryResult {
  if (error instanceof CallbackRefusedError) return { outcome: "refused", detail: error.message };
  if (error instanceof DeliveryTimeoutError) return { outcome: "timeout", detail: error.message };
  return { outcome: "unreachable", detail: error instanceof Error ? error.message : String(error) };
}

export async function deliverCallback(delivery: DeliveryRequest): Promise<DeliveryResult> {
  const agent = delivery.url.protocol === "https:" ? delivery.agents.https : delivery.agents.http;
  const first = await post(delivery, agent);
  // A kept-open connection the receiver closed just as it was reused: the
  // request never reached it, so send it again, on a connection of its own.
  return first.staleConnection ? (await post(delivery, false)).result : first.result;
}

interface Attempt {
  readonly result: DeliveryResult;
  /** It failed on a reused connection that the receiver had closed. */
  readonly staleConnection: boolean;
}

/** Errors of a reused connection that the receiver had already closed. */
const STALE_CONNECTION_ERRORS = new Set(["ECONNRESET", "EPIPE"]);

/**
 * The deadline is checked once more after the event loop's next look at its
 * sockets (an immediate runs after the poll phase, a timer before it). A
 * worker's loop runs every compaction it holds and can be busy for hundreds
 * of milliseconds at a stretch (docs/OPERATIONS.md, "Event-loop delay"): an
 * answer that came in time meanwhile waits unread, and the timer, due while
 * the loop was busy, would otherwise fire first and throw it away, counting
 * a receiver that answered at once as one that timed out.
 */
function post({ url, headers, body, timeoutMs, lookup }: DeliveryRequest, agent: Agent | false): Promise<Attempt> {
  return new Promise((resolve) => {
    const send = url.protocol === "https:" ? httpsRequest : httpRequest;
    const request = send(url, {
      method: "POST",
      headers: {
        ...headers,
        "content-type": "application/json",
        "content-length": String(body.byteLength),
        "user-agent": "compactd-webhooks",
      },
      lookup,
      agent,
    });
    let lastLook: NodeJS.Immediate | undefined;
    const timer = setTimeout(() => {
      lastLook = setImmediate(() => request.destroy(new DeliveryTimeoutError(`receiver did not answer within ${timeoutMs} ms`)));
    }, timerDelay(timeoutMs));
    const stopTheClock = (): void => {
      clearTimeout(timer);
      clearImmediate(lastLook);
    };
    request.once("response", (response) => {
      stopTheClock();
      // The body is not needed; drain it, which frees the connection for the next callback.
      response.resume();
      response.on("error", () => undefined);
      resolve({ result: outcomeOfStatus(response.statusCode ?? 0, response.headers.location), staleConnection: false });
      // A body that never ends would hold its connection for good.
      request.setTimeout(timerDelay(timeoutMs), () => request.destroy());
    });
    // `on`, not `once`: the socket may fail again while the body drains, and
    // an unheard error event would crash the worker. Later calls are no-ops.
    request.on("error", (error: NodeJS.ErrnoException) => {
      stopTheClock();
      const staleConnection = request.reusedSocket && error.code !== undefined && STALE_CONNECTION_ERRORS.has(error.code);
      resolve({ result: outcomeOfError(error), staleConnection });
    });
    request.end(body);
  });
}
