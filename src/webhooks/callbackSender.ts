import { context, propagation, SpanKind, SpanStatusCode } from "@opentelemetry/api";
import { observeLatency } from "../metrics/exemplars.js";
import type { Metrics } from "../metrics/metrics.js";
import { tracer } from "../telemetry/tracing.js";
import { parseCallbackAllow } from "./callbackAllow.js";
import type { CallbackConfig, CallbackJobData } from "./callbackQueue.js";
import { CallbackUrlError, parseCallbackUrl } from "./callbackUrl.js";
import { createCallbackAgents } from "./callbackAgents.js";
import { type DeliveryResult, deliverCallback } from "./deliverCallback.js";
import { guardedLookup } from "./guardedLookup.js";
import { startReceiverClock } from "./receiverClock.js";
import { createReceiverSlots, type ReceiverSlot, type ReceiverSlots } from "./receiverSlots.js";
import { type ResolveHost, systemResolveHost } from "./resolveHost.js";
import { signWebhook } from "./signing.js";

/**
 * What a worker process sends callbacks with: one allow-list, one address
 * guard, one pool of kept-open connections and one share of slots per
 * receiver, used by both paths that send. The first delivery is made by the
 * worker settling the job (firstDelivery.ts); the callback queue's worker
 * makes every retry (callbackWorker.ts). Sharing the slots holds a receiver
 * to one share across both.
 */

/** What a delivery needs of a callback: where it goes, its webhook-id and its type. */
export type CallbackTarget = Pick<CallbackJobData, "url" | "webhookId" | "type">;

export interface CallbackSenderOptions {
  readonly config: CallbackConfig;
  readonly metrics: Metrics;
  /** Tests make names resolve where they like; production uses the system resolver. */
  readonly resolveHost?: ResolveHost;
}

export interface CallbackSender {
  readonly slots: ReceiverSlots;
  /**
   * Signs with `secret` and posts `body` as attempt number `attempt`,
   * within `timeoutMs`, in `slot` (which it releases with the time taken),
   * through the address guard; counts the outcome in
   * `compactd_callbacks_total`.
   */
  send(target: CallbackTarget, secret: string, attempt: number, body: string, slot: ReceiverSlot, timeoutMs: number): Promise<DeliveryResult>;
  /** Closes the kept-open connections. */
  destroy(): void;
}

export function createCallbackSender({ config, metrics, resolveHost = systemResolveHost }: CallbackSenderOptions): CallbackSender {
  const allow = parseCallbackAllow(config.callbackAllow);
  const lookup = guardedLookup(allow, resolveHost);
  const agents = createCallbackAgents();

  const post = async (target: CallbackTarget, secret: string, attempt: number, body: string, timeoutMs: number): Promise<DeliveryResult> => {
    let url: URL;
    try {
      // Literal addresses never reach the lookup: judge them here, under
      // today's allow-list.
      url = parseCallbackUrl(target.url, allow);
    } catch (error) {
      if (error instanceof CallbackUrlError) return { outcome: "refused", detail: error.message };
      throw error;
    }
    // The receiver continues the trace: the request carries this span's
    // traceparent. The URL's host only, never its path or query (it may hold a token).
    const attributes = {
      "server.address": url.hostname,
      "compactd.webhook.id": target.webhookId,
      "compactd.webhook.event": target.type,
      "compactd.callback.attempt": attempt,
    };
    return tracer().startActiveSpan("deliver callback", { kind: SpanKind.CLIENT, attributes }, async (span) => {
      // Encoded once for the signature, the length and the socket (a result is tens of KB).
      const bytes = Buffer.from(body, "utf8");
      const headers: Record<string, string> = { ...signWebhook(secret, target.webhookId, bytes) };
      propagation.inject(context.active(), headers);
      const started = performance.now();
      const result = await deliverCallback({ url, headers, body: bytes, timeoutMs, lookup, agents });
      observeLatency(metrics.callbackDuration, {}, (performance.now() - started) / 1000);
      span.setAttribute("compactd.callback.outcome", result.outcome);
      if (result.outcome !== "delivered" && result.outcome !== "gone") span.setStatus({ code: SpanStatusCode.ERROR, message: result.outcome });
      span.end();
      return result;
    });
  };

  return {
    slots: createReceiverSlots(config.callbackHostConcurrency, config.callbackTimeoutMs),
    async send(target, secret, attempt, body, slot, timeoutMs) {
      const clock = startReceiverClock();
      let result: DeliveryResult | undefined;
      try {
        result = await post(target, secret, attempt, body, timeoutMs);
      } finally {
        // An answer is judged net of this worker's own lateness; no answer, by the deadline it missed.
        slot.release(result === undefined || result.outcome === "timeout" ? clock.elapsedMs() : clock.receiverMs());
      }
      metrics.callbacksTotal.inc({ outcome: result.outcome });
      return result;
    },
    destroy: () => agents.destroy(),
  };
}
