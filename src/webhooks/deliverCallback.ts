import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import type { LookupFunction } from "node:net";
import type { CallbackOutcome } from "../metrics/metrics.js";
import { CallbackRefusedError } from "./guardedLookup.js";

/**
 * One POST of a signed callback, classified. `node:http(s)` rather than
 * `fetch`: only they take the guarded `lookup`, and they never follow
 * redirects (a redirect could point anywhere, including inside).
 */

export interface DeliveryRequest {
  readonly url: URL;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  /** Bounds the whole exchange up to the response status. */
  readonly timeoutMs: number;
  readonly lookup: LookupFunction;
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

export function deliverCallback({ url, headers, body, timeoutMs, lookup }: DeliveryRequest): Promise<DeliveryResult> {
  return new Promise((resolve) => {
    const send = url.protocol === "https:" ? httpsRequest : httpRequest;
    const request = send(url, {
      method: "POST",
      headers: {
        ...headers,
        "content-type": "application/json",
        "content-length": String(Buffer.byteLength(body)),
        "user-agent": "compactd-webhooks",
      },
      lookup,
      // One connection per attempt, closed after it: no pool of sockets to
      // receivers that may be gone for a day.
      agent: false,
    });
    const timer = setTimeout(
      () => request.destroy(new DeliveryTimeoutError(`receiver did not answer within ${timeoutMs} ms`)),
      timeoutMs,
    );
    request.once("response", (response) => {
      clearTimeout(timer);
      // The body is not needed; drain it and let the connection close.
      response.resume();
      response.on("error", () => undefined);
      resolve(outcomeOfStatus(response.statusCode ?? 0, response.headers.location));
      request.setTimeout(timeoutMs, () => request.destroy());
    });
    // `on`, not `once`: the socket may fail again while the body drains, and
    // an unheard error event would crash the worker. Later calls are no-ops.
    request.on("error", (error) => {
      clearTimeout(timer);
      resolve(outcomeOfError(error));
    });
    request.end(body);
  });
}
