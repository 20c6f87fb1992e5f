/**
 * The worker process: compaction jobs, callback deliveries, the cancel
 * listener, metrics and probes.
 *
 * Crash safety comes from BullMQ's locks, tuned by config: a worker holds each
 * job's lock for `lockDurationMs` and renews it at half that; every worker
 * checks every `stalledIntervalMs` for jobs whose lock lapsed and puts them
 * back in the queue. So a SIGKILLed worker's jobs run again elsewhere within
 * about lockDuration + stalledInterval (15 s by default), and a job is only
 * failed for stalling after `maxStalledCount` takeovers (a job that kills
 * every worker that touches it).
 */
import { Worker } from "bullmq";
import { ErrorCodes } from "../client/errorCodes.js";
import type { Config } from "../config.js";
import { settlesWithin } from "../core/settleWithin.js";
import { prepareTokenCounter } from "../core/tokenCounter.js";
import { createMetrics, type Metrics } from "../metrics/metrics.js";
import { createLogger, type Logger } from "../telemetry/logger.js";
import { queueTelemetry } from "../telemetry/tracing.js";
import { startMetricsServer, type MetricsServer } from "../metrics/metricsServer.js";
import { startQueueJobsCollector } from "../metrics/queueJobsCollector.js";
import { listenForCancels } from "../queue/cancelChannel.js";
import { holdsJobData, type CompactionJobData } from "../queue/compactionJob.js";
import { COMPACTION_QUEUE, shardPrefix } from "../queue/queueNames.js";
import { openQueueStores } from "../queue/queueStores.js";
import { closeRedisConnection, createRedisConnection, redisEndpointOf } from "../queue/redisConnection.js";
import { probeShards } from "../queue/redisReadiness.js";
import type { RunningProcess } from "../queue/runningProcess.js";
import { shutdownDeadline, type ShutdownDeadline } from "../queue/shutdownDeadline.js";
import { createCallbackQueue } from "../webhooks/callbackQueue.js";
import { createCallbackSender } from "../webhooks/callbackSender.js";
import { createCallbackWorker } from "../webhooks/callbackWorker.js";
import { firstDeliveryNotifier } from "../webhooks/firstDelivery.js";
import type { ResolveHost } from "../webhooks/resolveHost.js";
import { CANCEL_REASON, createCompactionProcessor, failLostJob, SHUTDOWN_REASON, type CompactionReturn } from "./compactionProcessor.js";
import { createSummarizerSource } from "./summarizerSource.js";

export interface WorkerOptions {
  /** Shared with the API in `compactd dev`; a fresh registry otherwise. */
  readonly metrics?: Metrics;
  /** Serve /metrics, /healthz and /readyz on `config.metricsPort` (default true). */
  readonly serveMetrics?: boolean;
  /** Tests make callback hosts resolve where they like. */
  readonly resolveHost?: ResolveHost;
  /** Where worker-level errors (Redis trouble) go; default the log. */
  readonly onError?: (error: Error) => void;
  /** JSON log lines; default stdout at COMPACTD_LOG_LEVEL. */
  readonly logger?: Logger;
  /** The process's shutdown deadline, shared with the API in `compactd dev`; a deadline of its own otherwise. */
  readonly shutdown?: ShutdownDeadline;
}

export interface RunningWorker extends RunningProcess {
  /** The metrics server's port (useful with METRICS_PORT=0), or undefined when not serving. */
  readonly metricsPort: number | undefined;
  /** Whether the worker is taking jobs: what /healthz reports. */
  consuming(): boolean;
}

/**
 * Share of the shutdown deadline spent letting active jobs finish; the rest is
 * for handing the unfinished ones back to the queue and closing connections.
 */
const FINISH_SHARE = 0.8;

export async function runWorker(config: Config, options: WorkerOptions = {}): Promise<RunningWorker> {
  const metrics = options.metrics ?? createMetrics();
  const logger = options.logger ?? createLogger("worker", config.logLevel);
  const onError = options.onError ?? ((error: Error) => logger.error({ errorName: error.name, error: error.message }, "worker error"));
  // Before any job is taken, so that the first one does not wait for the tokenizer's table.
  logger.info(prepareTokenCounter(), "token counter ready");

  const redis = createRedisConnection(redisEndpointOf(config), "worker", config.queuePrefix);
  const workerConnection = createRedisConnection(redisEndpointOf(config), "worker", config.queuePrefix);
  const callbackConnection = createRedisConnection(redisEndpointOf(config), "worker", config.queuePrefix);
  const subscriber = createRedisConnection(redisEndpointOf(config), "subscriber", config.queuePrefix);
  for (const connection of [redis, workerConnection, callbackConnection, subscriber]) connection.on("error", onError);

  const callbackQueue = createCallbackQueue(redis, config);
  callbackQueue.on("error", onError);
  // Settling a job delivers its callback at once; the callback worker retries what that did not deliver.
  const sender = createCallbackSender({ config, metrics, ...(options.resolveHost !== undefined && { resolveHost: options.resolveHost }) });
  const notify = firstDeliveryNotifier(callbackQueue, sender, config, logger);
  const stores = openQueueStores(redis, config, { metrics, notify, onError });
  const { keys, compactionQueues, results, payloads, lifecycle } = stores;

  // One BullMQ worker per shard, sharing the process's concurrency: a
  // conversation's jobs are spread evenly over shards, so each gets its share.
  const processor = createCompactionProcessor({
    results,
    payloads,
    lifecycle,
    metrics,
    log: logger,
    summarizerFor: createSummarizerSource(config),
    lockDurationMs: config.lockDurationMs,
  });
  const workers = compactionQueues.shards.map(
    (_queue, shard) =>
      new Worker<CompactionJobData, CompactionReturn>(COMPACTION_QUEUE, processor, {
        connection: workerConnection,
        prefix: shardPrefix(config.queuePrefix, shard),
        concurrency: Math.ceil(config.workerConcurrency / compactionQueues.shards.length),
        lockDuration: config.lockDurationMs,
        stalledInterval: config.stalledIntervalMs,
        maxStalledCount: config.maxStalledCount,
        // Applies only to a job without its own retention, and every job is
        // queued with one (compactionQueue.ts): so only to a job whose record
        // Redis lost, which is removed as it fails. Kept without retention,
        // it would stay in the failed set until a later failure's retention
        // sweep happened to reach it, and so would its conversation's
        // in-flight key: BullMQ discards that key on the next add only once
        // the job it names is gone. Until then the conversation would be
        // refused (409, naming a job that answers 410), and so would the
        // job's Idempotency-Key (422).
        removeOnFail: { count: 0 },
        ...queueTelemetry(),
      }),
  );
  for (const worker of workers) {
    worker.on("error", onError);
    worker.on("stalled", (jobId) => {
      metrics.stalledJobsTotal.inc();
      logger.warn({ jobId }, "job stalled: its worker stopped renewing the lock; it goes back to the queue");
    });
    // A job that stalled too often is failed by BullMQ before any processor
    // sees it again: settle it here, or its callback and batch never hear.
    worker.on("failed", (job) => {
      if (job?.id === undefined || !job.deferredFailure) return;
      if (!holdsJobData(job.data)) {
        failLostJob(lifecycle, logger, job.id).catch(onError);
        return;
      }
      // A reader of the job may have settled it first (jobView.ts); either
      // way it is counted once, by whoever stored it. Logged here, where
      // BullMQ fails it, unless a processor stored another outcome before the
      // job went on stalling.
      lifecycle
        .settleStalled({
          id: job.id,
          data: job.data,
          timestamp: job.timestamp,
          failedReason: job.deferredFailure,
          ...(job.finishedOn !== undefined && { finishedOn: job.finishedOn }),
        })
        .then((recorded) => {
          if (recorded.status !== "failed" || recorded.error.code !== ErrorCodes.stalled) return;
          logger.error(
            { jobId: job.id, tenant: job.data.tenant, conversationId: job.data.conversationId, reason: job.data.reason, outcome: "failed", errorCode: ErrorCodes.stalled },
            "compaction failed: it stalled more often than COMPACTD_MAX_STALLED_COUNT",
          );
        })
        .catch(onError);
    });
  }
  // Not awaited: a worker starts (and can be stopped) while Redis is still
  // away. A cancel broadcast before the subscription is in place is covered by
  // the cancellation flag the processor checks.
  listenForCancels(subscriber, keys, (jobId) => {
    for (const worker of workers) worker.cancelJob(jobId, CANCEL_REASON);
  }).catch(onError);

  const callbackWorker = createCallbackWorker({ config, connection: callbackConnection, metrics, results, sender, log: logger, onError });
  const collector = startQueueJobsCollector({
    metrics,
    redis,
    prefix: config.queuePrefix,
    queues: [...compactionQueues.shards, callbackQueue],
  });

  let closing: Promise<void> | undefined;
  const consuming = (): boolean => closing === undefined && workers.every((worker) => worker.isRunning() && !worker.isPaused());
  let server: MetricsServer | undefined;
  if (options.serveMetrics !== false) {
    server = await startMetricsServer({
      registry: metrics.registry,
      port: config.metricsPort,
      probes: {
        "/healthz": () => ({ ok: consuming(), detail: { consuming: consuming() } }),
        "/readyz": async () => {
          const probe = await probeShards(redis, compactionQueues);
          return { ok: probe.ok, ...(!probe.ok && { detail: { redis: probe.fault } }) };
        },
      },
    });
  }

  const connections = { commands: redis, "compaction worker": workerConnection, "callback worker": callbackConnection, subscriber };
  const shutdown = async (): Promise<void> => {
    const deadline = options.shutdown ?? shutdownDeadline(config.shutdownTimeoutMs);
    // Counted from the shutdown's start: under a deadline shared with the API
    // (dev), jobs kept running while it closed, and what is left is for handing back.
    const finishBy = deadline.endsAt() - config.shutdownTimeoutMs * (1 - FINISH_SHARE);
    const workersClosed = Promise.all(workers.map((worker) => worker.close()));
    const callbacksClosed = callbackWorker.close();
    // Active compactions get most of the deadline to finish; then the rest are
    // aborted, which hands each back to the queue for another worker.
    if (!(await settlesWithin(workersClosed, finishBy - Date.now()))) {
      for (const worker of workers) worker.cancelAllJobs(SHUTDOWN_REASON);
    }
    // Past the deadline (Redis gone, say), the connections are dropped under
    // whatever still waits on them; unfinished jobs' locks lapse and other
    // workers take them over. A delivery in flight is cut off the same way,
    // and retried elsewhere.
    await Promise.all([
      deadline.step("compaction workers (their jobs in progress)", workersClosed, () => Promise.all(workers.map((worker) => worker.disconnect()))),
      deadline.step("callback worker (its deliveries in progress)", callbacksClosed, () => callbackWorker.worker.disconnect()),
    ]);
    await Promise.all([
      deadline.step("queue-size collector", collector.close()),
      deadline.step("metrics server", server?.close() ?? Promise.resolve()),
      deadline.step("compaction queues", stores.close()),
      deadline.step("callback queue", callbackQueue.close()),
    ]);
    sender.destroy();
    // Whatever is still waiting on Redis (it may be down) is cut off with its connection.
    await Promise.all(
      Object.entries(connections).map(([name, connection]) =>
        deadline.step(`Redis connection (${name})`, closeRedisConnection(connection), () => connection.disconnect()),
      ),
    );
  };

  return {
    metricsPort: server?.port,
    consuming,
    close() {
      closing ??= shutdown();
      return closing;
    },
  };
}
