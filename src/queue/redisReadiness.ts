/**
 * Whether the service's Redis can serve its queues right now: the probe
 * behind both processes' /readyz; and when the API's connection can take
 * the next command ({@link whenAcceptingCommands}).
 *
 * The probe writes a key in each queue shard's own slot (the shard prefix's
 * hash tag), because a PING proves little: it succeeds on a replica
 * (READONLY to every write), on a cluster it reaches any node while the
 * master that owns a shard's slot is dead and its replica not yet promoted,
 * and on some versions it answers before a restarted Redis has loaded its
 * data — states in which submissions fail. ioredis routes each write to the
 * slot's current owner; on a standalone Redis it is as cheap as a PING.
 * Bounded by its own deadline, because a worker's connection waits for Redis
 * without limit and a kubelet probe must be answered within a second; a
 * failure names its cause (redisFaults.ts).
 */
import { Cluster } from "ioredis";
import { settleWithin, TIMED_OUT } from "../core/settleWithin.js";
import type { CompactionQueues } from "./compactionQueue.js";
import type { RedisClient } from "./redisConnection.js";
import { redisFaultOf, type RedisFaultKind } from "./redisFaults.js";

export type RedisProbe = { readonly ok: true } | { readonly ok: false; readonly fault: RedisFaultKind | "error" };

/** How long a readiness probe waits for Redis. */
const READY_PROBE_MS = 1_000;

/** Every shard's slot takes a write: a shard without a master would leave its conversations' jobs waiting. */
export async function probeShards(redis: RedisClient, queues: CompactionQueues): Promise<RedisProbe> {
  const probes = await Promise.all(queues.shards.map((queue) => probeRedis(redis, `${queue.qualifiedName}:readiness`)));
  return probes.find((probe) => !probe.ok) ?? { ok: true };
}

/**
 * Writes `key` (it expires on its own) and reports whether Redis took it
 * within `ms`, waiting out a connection that is (re)connecting meanwhile.
 */
async function probeRedis(redis: RedisClient, key: string, ms = READY_PROBE_MS): Promise<RedisProbe> {
  // Aborted when the probe ends, so a connection still (re)connecting is no longer waited for.
  const controller = new AbortController();
  const write = connected(redis, controller.signal)
    .then(() => redis.set(key, String(Date.now()), "PX", 60_000))
    .then(
      (): RedisProbe => ({ ok: true }),
      (error: unknown): RedisProbe => ({ ok: false, fault: redisFaultOf(error) ?? "error" }),
    );
  try {
    const probe = await settleWithin(write, ms);
    return probe !== TIMED_OUT ? probe : { ok: false, fault: redis.status === "ready" ? "timeout" : "connection" };
  } finally {
    controller.abort();
  }
}

/** Resolves once `redis` can take a command (see acceptsCommands), or never if `signal` aborts first. */
function connected(redis: RedisClient, signal: AbortSignal): Promise<void> {
  if (acceptsCommands(redis)) return Promise.resolve();
  return new Promise((resolve) => {
    const ready = (): void => resolve();
    redis.once("ready", ready);
    signal.addEventListener("abort", () => redis.off("ready", ready));
  });
}

/**
 * Resolves once `redis` can take a command; rejects with `unavailable()`
 * after `timeoutMs`. For a connection without an offline queue (the API's),
 * on which a command sent at the wrong moment fails at once.
 *
 * "ready" is not enough. When the server closes a connection (a restart, a
 * failover, `CLIENT KILL`), ioredis still says "ready" until it handles the
 * close, and a command sent in between fails at once: requests that came in
 * that instant were answered 503 though Redis was back within milliseconds.
 * So the socket must be writable too, else this waits for the reconnection.
 * A cluster has a socket per node and reroutes by itself: its status is the
 * answer.
 */
export async function whenAcceptingCommands(redis: RedisClient, timeoutMs: number, unavailable: () => Error): Promise<void> {
  // The usual case, on every request: no timer to set.
  if (acceptsCommands(redis)) return;
  const controller = new AbortController();
  try {
    if ((await settleWithin(connected(redis, controller.signal), timeoutMs)) === TIMED_OUT) throw unavailable();
  } finally {
    controller.abort();
  }
}

/**
 * Whether a command sent now can be written: the status says "ready" and,
 * on a single connection, its socket is still writable (see
 * {@link whenAcceptingCommands}). The readiness probe waits for the same.
 */
function acceptsCommands(redis: RedisClient): boolean {
  if (redis.status !== "ready") return false;
  return redis instanceof Cluster || redis.stream.writable;
}
