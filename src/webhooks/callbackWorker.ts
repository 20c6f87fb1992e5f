import { DelayedError, UnrecoverableError, Worker } from "bullmq";
import type { RedisClient } from "../queue/redisConnection.js";
import type { Metrics } from "../metrics/metrics.js";
import type { Logger } from "../telemetry/logger.js";
import { inflatePayload } from "../queue/payloadCodec.js";
import { queueTelemetry } from "../telemetry/tracing.js";
import { CALLBACK_QUEUE } from "../queue/queueNames.js";
import type { ResultStore } from "../queue/resultStore.js";
import { bodyAroundResult, type CallbackConfig, type CallbackJob, type CallbackJobData, callbackRetryPolicy } from "./callbackQueue.js";
import { logAnswered } from "./answeredLog.js";
import type { CallbackSender } from "./callbackSender.js";
import { receiverOf } from "./receiverSlots.js";
import { callbackRetryDelay } from "./retrySchedule.js";

/**
 * Delivers queued callbacks: signs each attempt, posts it through the
 * address guard, and lets BullMQ retry failures on the capped exponential
 * schedule until the callback's age runs out.
 *
 * 2xx completes the job, 410 completes it too (the receiver unsubscribed: no
 * retry, no error, logged as refused rather than delivered), a refused address fails it for good (retrying cannot make
 * it public); everything else (other statuses, redirects, timeouts,
 * connection errors) is retried. Each receiver gets a bounded share of the
 * delivery slots (receiverSlots.ts), so one that hangs delays nobody else.
 */

export interface CallbackWorkerOptions {
  readonly config: CallbackConfig;
  /** Needs `maxRetriesPerRequest: null`, like every BullMQ worker connection. */
  readonly connection: RedisClient;
  readonly metrics: Metrics;
  /** Where a `compaction.completed` callback's result is read from at delivery. */
  readonly results: ResultStore;
  /** What posts each attempt; the process's first deliveries share it. */
  readonly sender: CallbackSender;
  /** Each refused or failed attempt is logged with the webhook id, event, outcome and attempt. */
  readonly log: Logger;
  /** Worker-level errors (Redis trouble); default: printed to stderr. */
  readonly onError?: (error: Error) => void;
}

export interface CallbackWorker {
  readonly worker: Worker<CallbackJobData>;
  /** Waits for deliveries in flight (each bounded by the callback timeout); the sender stays the caller's. */
  close(): Promise<void>;
}

/** What a completed callback job returns (kept with the job in Redis). */
export interface CallbackJobResult {
  readonly outcome: "delivered" | "gone";
  readonly detail: string;
}

export function createCallbackWorker({ config, connection, metrics, results, sender, log, onError = (error) => console.error(`compactd callbacks: ${error.message}`) }: CallbackWorkerOptions): CallbackWorker {
  const policy = callbackRetryPolicy(config);
  const { slots } = sender;

  const processJob = async (job: CallbackJob, token?: string): Promise<CallbackJobResult> => {
    if (config.webhookSecret === undefined) {
      metrics.callbacksTotal.inc({ outcome: "abandoned" });
      throw new UnrecoverableError("COMPACTD_WEBHOOK_SECRET is not set on this worker: callbacks cannot be signed");
    }
    const receiver = receiverOf(job.data.url);
    // Back to the queue without spending an attempt: when the receiver holds
    // its whole share and has no room for another to wait here (checked
    // before the result is read, since hundreds of callbacks may cycle so
    // behind one busy receiver), or when no slot freed within the wait.
    const deferToQueue = async (): Promise<never> => {
      // Each fetch from the queue starts an attempt and a deferral spends none, so the difference counts the deferrals.
      const timesDeferred = job.attemptsStarted - job.attemptsMade - 1;
      await job.moveToDelayed(Date.now() + slots.deferralMs(receiver, timesDeferred), token);
      throw new DelayedError();
    };
    if (!slots.mayQueue(receiver)) return deferToQueue();
    // Read before taking the slot: the slot bounds what a receiver is sent at
    // once, and reading the store is none of its business (on a busy worker
    // the read takes loop turns that would otherwise count against its share).
    const body = await bodyOf(job.data, results);
    if (body === undefined) {
      metrics.callbacksTotal.inc({ outcome: "abandoned" });
      const detail = "the result it reports is no longer stored (kept for COMPACTD_RESULT_TTL_SECONDS)";
      log.error({ webhookId: job.data.webhookId, event: job.data.type, outcome: "abandoned", detail, attempt: job.attemptsMade + 1 }, "callback abandoned: its receiver will never hear of this result");
      throw new UnrecoverableError(detail);
    }
    const slot = await slots.acquire(receiver);
    if (slot === undefined) return deferToQueue();
    const result = await sender.send(job.data, config.webhookSecret, job.attemptsMade + 1, body, slot, config.callbackTimeoutMs);
    const fields = { webhookId: job.data.webhookId, event: job.data.type, outcome: result.outcome, detail: result.detail, attempt: job.attemptsMade + 1 };
    if (result.outcome === "delivered" || result.outcome === "gone") {
      logAnswered(log, fields, { outcome: result.outcome, detail: result.detail });
      return { outcome: result.outcome, detail: result.detail };
    }
    const permanent = result.outcome === "refused";
    const abandoned = permanent || job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
    if (abandoned) metrics.callbacksTotal.inc({ outcome: "abandoned" });
    if (abandoned) log.error(fields, "callback abandoned: its receiver will never hear of this result");
    else log.warn(fields, "callback attempt failed; it will be retried");
    throw permanent ? new UnrecoverableError(result.detail) : new Error(result.detail);
  };

  const worker = new Worker<CallbackJobData, CallbackJobResult>(CALLBACK_QUEUE, processJob, {
    connection,
    prefix: config.queuePrefix,
    concurrency: config.callbackConcurrency,
    ...queueTelemetry(),
    // The compaction worker's crash settings: a delivery cut off by a crash
    // is retried within seconds, like a compaction.
    lockDuration: config.lockDurationMs,
    stalledInterval: config.stalledIntervalMs,
    maxStalledCount: config.maxStalledCount,
    settings: { backoffStrategy: (attemptsMade) => callbackRetryDelay(attemptsMade, policy) },
  });
  worker.on("error", onError);

  return {
    worker,
    close: () => worker.close(),
  };
}

/**
 * The body to sign and send, as text: stored whole, or spliced around the
 * job's stored result; undefined when that result has expired.
 */
async function bodyOf(data: CallbackJobData, results: ResultStore): Promise<string | undefined> {
  if ("body" in data) return data.body;
  if ("payload" in data) return inflatePayload(data.payload).toString("utf8");
  const result = await results.resultJson(data.resultOf);
  return result === undefined ? undefined : bodyAroundResult(data, result);
}
