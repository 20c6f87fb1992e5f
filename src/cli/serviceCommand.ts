/**
 * `compactd serve`, `compactd worker` and `compactd dev`: the service's
 * processes. Each reads the environment table once, refuses to start on a
 * wrong value (naming it), and on SIGTERM or SIGINT closes what it runs —
 * the API stops accepting, the worker finishes or hands back its jobs — then
 * exits 0. A second signal exits at once.
 *
 * Only `dev` finds or starts its own Redis when REDIS_URL is unset
 * (`localRedis.ts`); `serve` and `worker` use REDIS_URL or its default, since
 * production processes must all share one.
 */
import { randomBytes } from "node:crypto";
import { runApi } from "../api/runApi.js";
import { ConfigError, loadConfig, withoutCredentials, type Config } from "../config.js";
import { createMetrics } from "../metrics/metrics.js";
import type { RunningProcess } from "../queue/runningProcess.js";
import { shutdownDeadline } from "../queue/shutdownDeadline.js";
import { startTracing } from "../telemetry/tracing.js";
import { runWorker } from "../worker/runWorker.js";
import type { Io } from "./compactCommand.js";
import { localRedis, type LocalRedis } from "./localRedis.js";
import { EXIT, UsageError } from "./usageError.js";

export type ServiceKind = "serve" | "worker" | "dev";

/** Each process's default `service.name` in traces (OTEL_SERVICE_NAME overrides it). */
const SERVICE_NAMES: Readonly<Record<ServiceKind, string>> = { serve: "compactd-api", worker: "compactd-worker", dev: "compactd" };

/** The key `compactd dev` accepts when COMPACTD_API_KEYS is unset: a laptop needs no secret. */
const DEV_API_KEY = { tenant: "local", key: "dev" } as const;

/** Callback receivers `dev` may call besides public addresses: an agent on the same laptop. */
const DEV_CALLBACK_ALLOW = ["127.0.0.0/8", "::1", "localhost"] as const;

export interface ServiceOptions {
  /** Resolves when the process should shut down; defaults to the first SIGTERM or SIGINT. */
  readonly stopSignal?: Promise<void>;
  /** The address `dev` binds; loopback unless asked otherwise (`dev --host`). */
  readonly host?: string;
}

/** Runs until told to stop; returns the exit code. */
export async function runService(kind: ServiceKind, io: Io, options: ServiceOptions = {}): Promise<number> {
  let config = serviceConfig(kind, io);
  const running: RunningProcess[] = [];
  // One deadline for the whole process: `dev` closes its API and then its
  // worker, and a deadline each would let the shutdown take twice the timeout.
  const shutdown = shutdownDeadline(config.shutdownTimeoutMs);
  const log = (line: string) => io.stderr.write(`compactd ${kind}: ${line}\n`);
  let redis: LocalRedis | undefined;
  // Before any queue exists: BullMQ's telemetry is given to queues as they are made.
  const tracing = await startTracing(config, SERVICE_NAMES[kind]);
  if (tracing !== undefined) log("tracing on: exporting spans over OTLP/HTTP (OTEL_* variables)");
  try {
    if (kind === "dev") {
      if (config.redisClusterNodes === undefined) {
        redis = await localRedis({ env: io.env });
        log(redis.description);
        config = { ...config, redisUrl: redis.url };
      } else {
        log(sharedRedisLine(config));
      }
      const metrics = createMetrics();
      // Both parts close steps of the same names: each is labelled with its part in what was abandoned.
      const worker = await runWorker(config, { metrics, serveMetrics: false, shutdown: shutdown.part("worker") });
      running.push(worker);
      const host = options.host ?? "127.0.0.1";
      const api = await runApi(config, { metrics, shutdown: shutdown.part("API") }, host);
      running.push(api);
      log(`API and worker on http://${urlHost(host)}:${api.port} (Bearer ${config.apiKeys[0]!.key})`);
    } else if (kind === "serve") {
      log(sharedRedisLine(config));
      const api = await runApi(config, { shutdown });
      running.push(api);
      log(`API listening on port ${api.port}`);
    } else {
      log(sharedRedisLine(config));
      const worker = await runWorker(config, { shutdown });
      running.push(worker);
      log(`worker consuming; metrics on port ${worker.metricsPort ?? "off"}`);
    }
    await (options.stopSignal ?? firstSignal(log));
    log("shutting down");
    return EXIT.compacted;
  } finally {
    shutdown.begin();
    // Close in reverse order: the API stops taking requests before the worker stops taking jobs.
    for (const started of running.reverse()) await started.close();
    // Said rather than hidden: a shutdown that gave up on something (Redis unreachable, a request that would not end) is why work may be retried elsewhere.
    const abandoned = shutdown.abandoned();
    if (abandoned.length > 0) log(`abandoned at the shutdown deadline (COMPACTD_SHUTDOWN_TIMEOUT_MS=${config.shutdownTimeoutMs}): ${abandoned.join(", ")}`);
    await redis?.stop();
    await tracing?.shutdown();
    // Everything is closed; a connection the libraries still hold (Redis gone
    // during shutdown) must not keep the process alive past its grace period.
    setTimeout(() => process.exit(process.exitCode ?? EXIT.compacted), EXIT_GRACE_MS).unref();
  }
}

/** Said before connecting: a process waiting for an unreachable Redis otherwise looks hung. */
export function sharedRedisLine(config: Config): string {
  return config.redisClusterNodes === undefined
    ? `using the Redis at ${withoutCredentials(config.redisUrl)} (REDIS_URL)`
    : `using the Redis Cluster at ${withoutCredentials(config.redisClusterNodes.join(","))} (REDIS_CLUSTER_NODES)`;
}

/** How long a closed service may linger for stray handles before it exits anyway. */
const EXIT_GRACE_MS = 2_000;

function serviceConfig(kind: ServiceKind, io: Io): Config {
  let config: Config;
  try {
    config = loadConfig(io.env);
  } catch (err) {
    if (err instanceof ConfigError) throw new UsageError(err.message);
    throw err;
  }
  if (config.apiKeys.length === 0) {
    if (kind === "serve") {
      throw new UsageError("COMPACTD_API_KEYS is not set: give the API at least one tenant:key pair (see the README's configuration table)");
    }
    if (kind === "dev") {
      io.stderr.write(`compactd dev: COMPACTD_API_KEYS is not set; accepting the key "${DEV_API_KEY.key}" for tenant "${DEV_API_KEY.tenant}"\n`);
      config = { ...config, apiKeys: [DEV_API_KEY] };
    }
  }
  if (kind === "dev") config = withLocalCallbacks(config, io);
  if (kind !== "serve" && config.anthropicApiKey === undefined) {
    io.stderr.write(`compactd ${kind}: ANTHROPIC_API_KEY is not set; every result will be an offline summary (structured extract, no model)\n`);
  }
  return config;
}

/**
 * `dev` is a laptop tool: callbacks to the agent on the same machine must
 * work without setting up a signing secret first, so it makes one (printed,
 * for the receiver to verify with) and allows loopback receivers.
 */
function withLocalCallbacks(config: Config, io: Io): Config {
  let webhookSecret = config.webhookSecret;
  if (webhookSecret === undefined) {
    webhookSecret = `whsec_${randomBytes(32).toString("base64")}`;
    io.stderr.write(`compactd dev: COMPACTD_WEBHOOK_SECRET is not set; signing callbacks with ${webhookSecret}\n`);
  }
  return { ...config, webhookSecret, callbackAllow: [...config.callbackAllow, ...DEV_CALLBACK_ALLOW] };
}

/** An address as it goes into a URL: IPv6 in brackets. */
function urlHost(host: string): string {
  return host.includes(":") ? `[${host}]` : host;
}

/** The first SIGTERM or SIGINT; a second one ends the process without waiting. */
function firstSignal(log: (line: string) => void): Promise<void> {
  return new Promise((resolve) => {
    const onSignal = (signal: NodeJS.Signals) => {
      log(`${signal} received`);
      process.once("SIGTERM", () => process.exit(EXIT.failed));
      process.once("SIGINT", () => process.exit(EXIT.failed));
      resolve();
    };
    process.once("SIGTERM", onSignal);
    process.once("SIGINT", onSignal);
  });
}
