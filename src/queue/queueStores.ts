/**
 * The queues and stores every service process opens on one Redis connection:
 * the compaction queue's shards, the callback queue, job outcomes, batch records and
 * the settlement that ties them together. The API and the worker open them
 * the same way so both agree on retention, retries and key names.
 */
import type { RedisClient } from "./redisConnection.js";
import type { Config } from "../config.js";
import { createCallbackQueue, type CallbackQueue } from "../webhooks/callbackQueue.js";
import { BatchStore } from "./batchStore.js";
import { createCompactionQueues, type CompactionQueues } from "./compactionQueue.js";
import { createJobSettlement, type JobSettlement } from "./jobSettlement.js";
import { serviceKeys, type ServiceKeys } from "./queueNames.js";
import { announceSettled } from "./settledChannel.js";
import { ResultStore } from "./resultStore.js";

export interface QueueStores {
  readonly keys: ServiceKeys;
  readonly compactionQueues: CompactionQueues;
  readonly callbackQueue: CallbackQueue;
  readonly results: ResultStore;
  readonly batches: BatchStore;
  readonly settlement: JobSettlement;
  /** Closes both queues; the connection stays the caller's. */
  close(): Promise<void>;
}

/** `onError` hears the queues' connection trouble; ioredis reconnects by itself. */
export function openQueueStores(redis: RedisClient, config: Config, onError: (error: Error) => void): QueueStores {
  const keys = serviceKeys(config.queuePrefix);
  const compactionQueues = createCompactionQueues(redis, config.queueShards, {
    prefix: config.queuePrefix,
    attempts: config.jobAttempts,
    backoffMs: config.jobBackoffMs,
    retentionSeconds: config.resultTtlSeconds,
  });
  const callbackQueue = createCallbackQueue(redis, config);
  for (const queue of compactionQueues.shards) queue.on("error", onError);
  callbackQueue.on("error", onError);
  const results = new ResultStore(redis, keys, config.resultTtlSeconds);
  const batches = new BatchStore(redis, keys, config.resultTtlSeconds);
  return {
    keys,
    compactionQueues,
    callbackQueue,
    results,
    batches,
    settlement: createJobSettlement(results, batches, callbackQueue, (jobId) => announceSettled(redis, keys, jobId)),
    async close() {
      await Promise.allSettled([compactionQueues.close(), callbackQueue.close()]);
    },
  };
}
