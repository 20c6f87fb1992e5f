/**
 * Everything the API's routes use, created from the config and closed with
 * the app.
 */
import type { RedisClient } from "../queue/redisConnection.js";
import type { Config } from "../config.js";
import type { Metrics } from "../metrics/metrics.js";
import type { BatchStore } from "../queue/batchStore.js";
import type { CompactionQueues } from "../queue/compactionQueue.js";
import type { JobLifecycle } from "../queue/jobLifecycle.js";
import type { ServiceKeys } from "../queue/queueNames.js";
import { startQueueJobsCollector } from "../metrics/queueJobsCollector.js";
import { openQueueStores } from "../queue/queueStores.js";
import { closeRedisConnection, createRedisConnection, redisEndpointOf } from "../queue/redisConnection.js";
import type { ResultStore } from "../queue/resultStore.js";
import type { ShutdownDeadline } from "../queue/shutdownDeadline.js";
import { callbackNotifier, createCallbackQueue } from "../webhooks/callbackQueue.js";
import { parseCallbackAllow, type CallbackAllow } from "../webhooks/callbackAllow.js";
import type { ResolveHost } from "../webhooks/resolveHost.js";
import { whenAcceptingCommands } from "../queue/redisReadiness.js";
import { listenForSettled } from "../queue/settledChannel.js";
import { createAuthenticator, type Authenticate } from "./bearerAuth.js";
import { createIntakeRunner, type IntakeRunner } from "./intakePool.js";
import { createJobWaiters, type JobWaiters } from "./jobWaiter.js";
import { redisUnavailable } from "./apiError.js";

export interface ApiServices {
  readonly config: Config;
  readonly metrics: Metrics;
  readonly authenticate: Authenticate;
  readonly redis: RedisClient;
  readonly keys: ServiceKeys;
  readonly queues: CompactionQueues;
  readonly results: ResultStore;
  readonly batches: BatchStore;
  readonly lifecycle: JobLifecycle;
  readonly resolveHost: ResolveHost | undefined;
  /** COMPACTD_CALLBACK_ALLOW, compiled once at start-up rather than on every request with a callback. */
  readonly callbackAllow: CallbackAllow;
  /** Where each POST's CPU work runs: the event loop for small bodies, intake threads for large ones. */
  readonly intake: IntakeRunner;
  /** The requests holding `?wait`, woken by settlement broadcasts. */
  readonly waiters: JobWaiters;
  /**
   * Resolves once Redis can take a command (see whenAcceptingCommands),
   * waiting out a reconnection (a killed connection is back within a few
   * hundred ms); a 503 if it does not come back in time. Routes call it
   * before their first Redis command, because BullMQ waits for a connection
   * without limit and the request would hang.
   */
  whenRedisReady(): Promise<void>;
  /** Closes everything, each step bounded by `deadline` (a Redis gone away cannot hold it). */
  close(deadline: ShutdownDeadline): Promise<void>;
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
  const redis = createRedisConnection(redisEndpointOf(config), "api", config.queuePrefix, config.redisCommandTimeoutMs);
  redis.on("error", onError);
  const callbackQueue = createCallbackQueue(redis, config);
  callbackQueue.on("error", onError);
  const stores = openQueueStores(redis, config, { metrics, notify: callbackNotifier(callbackQueue), onError });
  // API processes compete for the queue-size lease too: with every worker
  // gone (scaled to zero, crashing), the backlog must still be exported, or
  // nothing shows that jobs wait and nobody takes them.
  const collector = startQueueJobsCollector({
    metrics,
    redis,
    prefix: config.queuePrefix,
    queues: [...stores.compactionQueues.shards, callbackQueue],
  });
  // Not awaited: the API starts (and answers 503) while Redis is away; ioredis subscribes once it is back.
  const subscriber = createRedisConnection(redisEndpointOf(config), "subscriber", config.queuePrefix);
  subscriber.on("error", onError);
  const waiters = createJobWaiters(config.maxWaiters);
  const intake = createIntakeRunner({ threads: config.intakeThreads, deadlineMs: config.intakeDeadlineMs });
  listenForSettled(subscriber, stores.keys, waiters.listener).catch(onError);
  return {
    config,
    metrics,
    authenticate: createAuthenticator(config.apiKeys),
    redis,
    keys: stores.keys,
    queues: stores.compactionQueues,
    results: stores.results,
    batches: stores.batches,
    lifecycle: stores.lifecycle,
    resolveHost,
    callbackAllow: parseCallbackAllow(config.callbackAllow),
    intake,
    waiters,
    whenRedisReady: () => whenAcceptingCommands(redis, REDIS_WAIT_MS, redisUnavailable),
    async close(deadline) {
      await deadline.step("intake threads", intake.close());
      await deadline.step("queue-size collector", collector.close());
      await Promise.all([deadline.step("compaction queues", stores.close()), deadline.step("callback queue", callbackQueue.close())]);
      const connections = { commands: redis, subscriber };
      await Promise.all(
        Object.entries(connections).map(([name, connection]) =>
          deadline.step(`Redis connection (${name})`, closeRedisConnection(connection), () => connection.disconnect()),
        ),
      );
    },
  };
}
