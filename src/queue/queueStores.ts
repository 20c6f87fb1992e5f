/**
 * The queues and stores every service process opens on one Redis connection:
 * the compaction queue's shards, queued payloads, job outcomes, batch records
 * and the job lifecycle that ties them together. The API and the worker open them the
 * same way so both agree on retention, retries and key names.
 */
import type { RedisClient } from "./redisConnection.js";
import type { Config } from "../config.js";
import type { Metrics } from "../metrics/metrics.js";
import { BatchStore } from "./batchStore.js";
import { broadcastCancel } from "./cancelChannel.js";
import { createCompactionQueues, type CompactionQueues } from "./compactionQueue.js";
import { createJobLifecycle, type JobLifecycle, type NotifyCallback } from "./jobLifecycle.js";
import { serviceKeys, type ServiceKeys } from "./queueNames.js";
import { PayloadStore } from "./payloadStore.js";
import { ResultStore } from "./resultStore.js";

export interface QueueStores {
  readonly keys: ServiceKeys;
  readonly compactionQueues: CompactionQueues;
  readonly results: ResultStore;
  readonly payloads: PayloadStore;
  readonly batches: BatchStore;
  readonly lifecycle: JobLifecycle;
  /** Closes the queues; the connection stays the caller's. */
  close(): Promise<void>;
}

export interface QueueStoresOptions {
  readonly metrics: Metrics;
  /** How settled jobs' callbacks are queued (the process owns the callback queue: webhooks/callbackQueue.ts). */
  readonly notify: NotifyCallback;
  /** Hears the queues' connection trouble; ioredis reconnects by itself. */
  readonly onError: (error: Error) => void;
}

export function openQueueStores(redis: RedisClient, config: Config, { metrics, notify, onError }: QueueStoresOptions): QueueStores {
  const keys = serviceKeys(config.queuePrefix);
  const compactionQueues = createCompactionQueues(redis, config.queueShards, {
    prefix: config.queuePrefix,
    attempts: config.jobAttempts,
    backoffMs: config.jobBackoffMs,
    retentionSeconds: config.resultTtlSeconds,
  });
  for (const queue of compactionQueues.shards) queue.on("error", onError);
  const results = new ResultStore(redis, keys, config.resultTtlSeconds, config.resultEncoding);
  const payloads = new PayloadStore(redis, keys);
  const batches = new BatchStore(redis, keys, config.resultTtlSeconds);
  return {
    keys,
    compactionQueues,
    results,
    payloads,
    batches,
    lifecycle: createJobLifecycle({
      queues: compactionQueues,
      results,
      payloads,
      batches,
      metrics,
      notify,
      broadcastCancel: (jobId) => broadcastCancel(redis, keys, jobId),
    }),
    close: () => compactionQueues.close(),
  };
}
