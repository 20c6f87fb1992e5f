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
import { createCallbackQueue, type CallbackQueue } from "../webhooks/callbackQueue.js";
import type { ResolveHost } from "../webhooks/resolveHost.js";
import { createAuthenticator, type Authenticate } from "./bearerAuth.js";
import { redisUnavailable } from "./apiError.js";

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
  readonly resolveHost: ResolveHost | undefined;
  /**
   * Resolves once Redis is connected, waiting out a reconnection (a killed
   * connection is back within a few hundred ms); a 503 if it does not come
   * back in time. Routes call it before their first Redis command, because
   * BullMQ waits for a connection without limit and the request would hang.
   */
  whenRedisReady(): Promise<void>;
  close(): Promise<void>;
}

/** How long a request waits for Redis to reconnect before it is answered 503. */
const REDIS_WAIT_MS = 2_000;

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
  redis.on("error", onError);
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
    settlement: createJobSettlement(results, batches, callbackQueue),
    resolveHost,
    async whenRedisReady() {
      if (redis.status === "ready") return;
      await new Promise<void>((resolve, reject) => {
        const ready = (): void => {
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(() => {
          redis.off("ready", ready);
          reject(redisUnavailable());
        }, REDIS_WAIT_MS);
        redis.once("ready", ready);
      });
    },
    async close() {
      await Promise.allSettled([queue.close(), callbackQueue.close()]);
      await closeRedisConnection(redis);
    },
  };
}
