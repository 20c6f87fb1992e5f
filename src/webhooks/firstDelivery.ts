import type { NotifyCallback } from "../queue/jobLifecycle.js";
import type { Logger } from "../telemetry/logger.js";
import { bodyAroundResult, callbackDeliveryOf, type CallbackConfig, type CallbackJobData, type CallbackQueue, callbackRetryPolicy, enqueueDelivery } from "./callbackQueue.js";
import { logAnswered } from "./answeredLog.js";
import type { CallbackSender } from "./callbackSender.js";
import type { DeliveryResult } from "./deliverCallback.js";
import { FIRST_DELIVERY_TIMEOUT_MS, receiverOf } from "./receiverSlots.js";
import { callbackRetryDelay } from "./retrySchedule.js";

/**
 * A worker's way to send a settled job's callback: it delivers it at once,
 * from the job's settling, and queues it only when that did not reach the
 * receiver.
 *
 * Why: nearly every callback is delivered on its first attempt, and queued
 * first, each cost a second BullMQ job: its add, the fetch and completion
 * scripts, the result read back from Redis and decompressed, the callback
 * worker's wait for the next one (docs/BENCHMARKS.md, Service). Delivered
 * from the settling, it is sent from the result text just stored, byte for
 * byte what a queued retry would send.
 *
 * Nothing is lost by it. The compaction job is still held by its worker
 * while the callback goes out: a worker that dies then leaves the job to
 * stall and be taken over, and the worker taking it over finds the stored
 * outcome and settles it again, which queues the callback (it has no result
 * text of its own). So a callback is delivered at least once, as a queued
 * one is; a receiver that answered just before the worker died hears it
 * twice under one webhook-id, on which receivers deduplicate (README, "Webhooks").
 *
 * Nobody's compaction waits on a slow receiver for long: a first delivery
 * goes only to a receiver that answered its last callback within
 * {@link FIRST_DELIVERY_TIMEOUT_MS} (a second), waits at most a second for a
 * slot of its share when the share is full (receiverSlots.ts), and is cut
 * off at the second; everything else goes to the queue at once, where the
 * full `COMPACTD_CALLBACK_TIMEOUT_MS` and the retry schedule apply.
 *
 * When the first attempt fails, the callback is queued to be retried after
 * the schedule's first delay; a refused address is queued at once, so the
 * callback worker refuses it for good and keeps it with the failed ones.
 */
export function firstDeliveryNotifier(queue: CallbackQueue, sender: CallbackSender, config: CallbackConfig, log: Logger): NotifyCallback {
  const policy = callbackRetryPolicy(config);
  const secret = config.webhookSecret;

  /** The first attempt's upshot: delivered (or gone), failed (retry after the first delay), or to be queued at once. */
  const deliverFirst = async (delivery: CallbackJobData, resultJson: string | undefined): Promise<"delivered" | "failed" | "queue"> => {
    // Without a secret nothing can be signed: the queue's worker says so, and fails the callback.
    if (secret === undefined) return "queue";
    const text = firstBody(delivery, resultJson);
    if (text === undefined) return "queue";
    const slot = await sender.slots.takeForFirstDelivery(receiverOf(delivery.url));
    if (slot === undefined) return "queue";
    const timeoutMs = Math.min(FIRST_DELIVERY_TIMEOUT_MS, config.callbackTimeoutMs);
    const fields = { webhookId: delivery.webhookId, event: delivery.type, attempt: 1 };
    let result: DeliveryResult;
    try {
      result = await sender.send(delivery, secret, 1, text, slot, timeoutMs);
    } catch (error) {
      // Whatever went wrong, the queue still has the callback.
      log.error({ ...fields, error: error instanceof Error ? error.message : String(error) }, "callback's first delivery failed unexpectedly; it is queued");
      return "queue";
    }
    if (result.outcome === "delivered" || result.outcome === "gone") {
      logAnswered(log, fields, { outcome: result.outcome, detail: result.detail });
      return "delivered";
    }
    log.warn({ ...fields, outcome: result.outcome, detail: result.detail }, "callback attempt failed; it will be retried");
    // A refused address is refused for good by the callback worker, and kept with the failed callbacks.
    return result.outcome === "refused" ? "queue" : "failed";
  };

  return async (url, notice, resultJson) => {
    // Built once: the first attempt sends it, and the queue keeps it for the retries.
    const delivery = callbackDeliveryOf(url, notice);
    const upshot = await deliverFirst(delivery, resultJson);
    if (upshot === "delivered") return;
    await enqueueDelivery(queue, delivery, upshot === "failed" ? callbackRetryDelay(1, policy) : 0);
  };
}

/**
 * The body of a first delivery, when it can be built without reading Redis:
 * always for an event that carries everything itself, and for a completed
 * compaction when its result text is at hand (the settling stored it).
 */
function firstBody(delivery: CallbackJobData, resultJson: string | undefined): string | undefined {
  if ("body" in delivery) return delivery.body;
  if (!("bodyBeforeResult" in delivery) || resultJson === undefined) return undefined;
  return bodyAroundResult(delivery, resultJson);
}
