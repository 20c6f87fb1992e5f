import { type Job, Queue } from "bullmq";
import type { WebhookEvent } from "../client/webhookEvents.js";
import type { RedisClient } from "../queue/redisConnection.js";
import type { Config } from "../config.js";
import type { CallbackNotice, NotifyCallback } from "../queue/jobLifecycle.js";
import { queueTelemetry } from "../telemetry/tracing.js";
import { WITHOUT_VERSION_CHECK } from "../queue/compactionQueue.js";
import { CALLBACK_QUEUE } from "../queue/queueNames.js";
import { type CallbackRetryPolicy, callbackAttempts } from "./retrySchedule.js";
import { webhookIdFor } from "./signing.js";

/**
 * The queue of callback deliveries. Callbacks have their own queue (same
 * prefix as the compactions) so a slow or dead receiver costs a delivery
 * worker's slot, never a compaction worker's; within the queue, each receiver
 * holds a bounded share of the slots (receiverSlots.ts), so a day of retries
 * to one receiver delays nobody else's callbacks.
 */

/**
 * A delivery. The body a receiver gets is `body` for an event that carries
 * everything itself (a failure, a batch); for `compaction.completed` it is
 * `bodyBeforeResult`, then the stored result's JSON text (read from the result
 * store under the job id `resultOf` at delivery), then `}`. Either way it is
 * signed and sent as that text, never decoded and re-serialized.
 */
export type CallbackJobData = {
  readonly url: string;
  readonly webhookId: string;
  /** The event's type, for dashboards and logs. */
  readonly type: WebhookEvent["type"];
} & (
  | { readonly body: string }
  | { readonly bodyBeforeResult: string; readonly resultOf: string }
  /** Queued by a version that stored the whole body compressed; delivered as its text. */
  | { readonly payload: string }
);

export type CallbackQueue = Queue<CallbackJobData>;
export type CallbackJob = Job<CallbackJobData>;

/** The settings the callback queue and worker read. */
export type CallbackConfig = Pick<
  Config,
  | "queuePrefix"
  | "webhookSecret"
  | "callbackAllow"
  | "callbackMaxAgeHours"
  | "callbackBackoffMs"
  | "callbackMaxBackoffMs"
  | "callbackTimeoutMs"
  | "callbackConcurrency"
  | "callbackHostConcurrency"
  | "lockDurationMs"
  | "stalledIntervalMs"
  | "maxStalledCount"
>;

/** Name of the custom backoff the callback worker implements (retrySchedule.ts). */
const CALLBACK_BACKOFF = "callback";

const CALLBACK_JOB_NAME = "deliver";

export function callbackRetryPolicy(config: CallbackConfig): CallbackRetryPolicy {
  return {
    backoffMs: config.callbackBackoffMs,
    maxBackoffMs: config.callbackMaxBackoffMs,
    maxAgeMs: config.callbackMaxAgeHours * 3_600_000,
  };
}

/**
 * Delivered callbacks are dropped soon (their payload may be a whole result,
 * and at full throughput a day of them would not fit in Redis); while kept,
 * enqueuing the same event again adds nothing, and afterwards receivers still
 * deduplicate on the webhook-id. Given-up ones stay for the callback age, for
 * inspection.
 */
const KEEP_DELIVERED = 1_000;
const KEEP_FAILED = 10_000;

export function createCallbackQueue(connection: RedisClient, config: CallbackConfig): CallbackQueue {
  return new Queue<CallbackJobData>(CALLBACK_QUEUE, {
    connection,
    prefix: config.queuePrefix,
    ...queueTelemetry(),
    ...WITHOUT_VERSION_CHECK,
    defaultJobOptions: {
      attempts: callbackAttempts(callbackRetryPolicy(config)),
      backoff: { type: CALLBACK_BACKOFF },
      removeOnComplete: { count: KEEP_DELIVERED },
      removeOnFail: { age: Math.ceil(config.callbackMaxAgeHours * 3600), count: KEEP_FAILED },
    },
  });
}

/** A callback's delivery as queued: where it goes, its webhook-id, its type and its body or how to build it. */
export function callbackDeliveryOf(url: string, event: CallbackNotice): CallbackJobData {
  const webhookId = webhookIdFor(event.type, event.id);
  const { type } = event;
  return type === "compaction.completed"
    ? // The object's own JSON with its closing brace opened up for the result.
      { url, webhookId, type, bodyBeforeResult: `${JSON.stringify(event).slice(0, -1)},"result":`, resultOf: event.id }
    : { url, webhookId, type, body: JSON.stringify(event) };
}

/**
 * The body of `delivery` around a completed compaction's result JSON text:
 * what the callback worker builds from the result it reads from the store,
 * and a first delivery from the text just stored (firstDelivery.ts), so a
 * retry sends the very bytes the first attempt did.
 */
export function bodyAroundResult(delivery: { readonly bodyBeforeResult: string }, resultJson: string): string {
  return `${delivery.bodyBeforeResult}${resultJson}}`;
}

/**
 * Queues `event` for delivery to `url` (checked at submission with
 * checkCallbackUrl), after `delayMs` when given, and returns its
 * `webhook-id`. `id` is the job or batch id; with `type` it determines the
 * `webhook-id`, which is the BullMQ job id, so enqueuing one event twice
 * while its job is kept delivers it once.
 */
export function enqueueCallback(queue: CallbackQueue, { url, event }: { url: string; event: CallbackNotice }, delayMs = 0): Promise<string> {
  return enqueueDelivery(queue, callbackDeliveryOf(url, event), delayMs);
}

/** {@link enqueueCallback} of a delivery already built with {@link callbackDeliveryOf}. */
export async function enqueueDelivery(queue: CallbackQueue, delivery: CallbackJobData, delayMs = 0): Promise<string> {
  await queue.add(CALLBACK_JOB_NAME, delivery, { jobId: delivery.webhookId, ...(delayMs > 0 && { delay: delayMs }) });
  return delivery.webhookId;
}

/** Settling's way to send a callback (see jobLifecycle.ts) from a process that makes no first delivery (the API): through `queue`. */
export function callbackNotifier(queue: CallbackQueue): NotifyCallback {
  return async (url, event) => {
    await enqueueCallback(queue, { url, event });
  };
}
