/**
 * Everything the API's routes use, created from the config and closed with
 * the app.
 */
import type { Redis } from "ioredis";
import type { Config } from "../config.js";
import type { Metrics } from "../metrics/metrics.js";
import { BatchStore } from "../queue/batchStore.js";
import { createCompactionQueue, type CompactionQueue } from "../queue/compactionQueue.js";
import { createJobSettlement, type JobSettlement } from "../queue/jobSettlement.js";
import { serviceKeys, type ServiceKeys } from "../queue/queueNames.js";
import { closeRedisConnection, createRedisConnection } from "../queue/redisConnection.js";
import { ResultStore } from "../queue/resultStore.js";
import { createCallbackQueue, enqueueCallback, type CallbackQueue } from "../webhooks/callbackQueue.js";
import type { ResolveHost } from "../webhooks/resolveHost.js";
import { createAuthenticator, type Authenticate } from "./bearerAuth.js";
import { createJobWaiter, type JobWaiter } from "./jobWaiter.js";

export interface ApiServices {
  readonly config: Config;
  readonly metrics: Metrics;
  readonly authenticate: Authenticate;
  readonly redis: Redis;
  readonly keys: ServiceKeys;
  readonly queue: CompactionQueue;
  readonly callbackQueue: CallbackQueue;
  readonly results: ResultStore;
  readonly batches: BatchStore;
  readonly settlement: JobSettlement;
  readonly waiter: JobWaiter;
  readonly resolveHost: ResolveHost | undefined;
  close(): Promise<void>;
}

/**
 * `onError` hears connection trouble (a killed connection, Redis restarting);
 * ioredis reconnects by itself, so it is for logs only.
 */
export function createApiServices(
  config: Config,
  metrics: Metrics,
  resolveHost: ResolveHost | undefined,
  onError: (error: Error) => void,
): ApiServices {
  const redis = createRedisConnection(config.redisUrl, "api", config.queuePrefix);
  // The events stream blocks on XREAD, so it cannot share the command connection.
  const events = createRedisConnection(config.redisUrl, "worker", config.queuePrefix);
  for (const connection of [redis, events]) connection.on("error", onError);
  const keys = serviceKeys(config.queuePrefix);
  const queue = createCompactionQueue(redis, {
    prefix: config.queuePrefix,
    attempts: config.jobAttempts,
    backoffMs: config.jobBackoffMs,
    retentionSeconds: config.resultTtlSeconds,
  });
  const callbackQueue = createCallbackQueue(redis, config);
  queue.on("error", onError);
  callbackQueue.on("error", onError);
  const results = new ResultStore(redis, keys, config.resultTtlSeconds);
  const batches = new BatchStore(redis, keys, config.resultTtlSeconds);
  const waiter = createJobWaiter(events, config.queuePrefix, onError);
  return {
    config,
    metrics,
    authenticate: createAuthenticator(config.apiKeys),
    redis,
    keys,
    queue,
    callbackQueue,
    results,
    batches,
    settlement: createJobSettlement(results, batches, async (url, event) => {
      await enqueueCallback(callbackQueue, { url, event });
    }),
    waiter,
    resolveHost,
    async close() {
      await Promise.allSettled([waiter.close(), queue.close(), callbackQueue.close()]);
      await Promise.all([closeRedisConnection(redis), closeRedisConnection(events)]);
    },
  };
}
