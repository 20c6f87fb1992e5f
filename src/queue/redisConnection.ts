/**
 * Redis connections for the API and the workers, to a standalone Redis (one
 * URL) or a Redis Cluster (the URLs of some of its nodes).
 *
 * Both roles must survive a Redis restart, a failover or an operator's
 * `CLIENT KILL` without losing work, but they fail differently: a worker waits
 * for Redis as long as it takes (its jobs are safe in Redis and BullMQ's
 * blocking calls demand it), while the API fails fast so an HTTP request
 * answers 503 instead of hanging until the load balancer times it out. BullMQ
 * advises exactly this for producers: no offline queue (a command sent while
 * disconnected fails at once instead of waiting for a reconnection) and a
 * command timeout (a Redis that is connected but stalled — `DEBUG SLEEP`,
 * `CLIENT PAUSE`, a slow fork — fails the command instead of holding it).
 *
 * On a cluster, ioredis follows `MOVED` and `ASK` redirections and, when a
 * master dies, retries the command against the slot map it re-reads until the
 * promoted replica answers; the limits below bound how long that may take.
 */
import { Cluster, Redis, type ClusterOptions, type RedisOptions } from "ioredis";
import type { Config } from "../config.js";

/** A connection to either kind of deployment; BullMQ and the stores take both. */
export type RedisClient = Redis | Cluster;

/** A standalone Redis's URL, or the URLs of some nodes of a Redis Cluster (the rest are discovered). */
export type RedisEndpoint = string | readonly string[];

/** The configured deployment: the cluster's nodes when given, else the standalone URL. */
export function redisEndpointOf(config: Pick<Config, "redisUrl" | "redisClusterNodes">): RedisEndpoint {
  return config.redisClusterNodes ?? config.redisUrl;
}

export type RedisRole = "api" | "worker" | "subscriber";

/** Reconnection attempts an API command rides out before it fails the request. */
const API_RETRIES_PER_REQUEST = 3;

/** The API's default command timeout (`COMPACTD_REDIS_COMMAND_TIMEOUT_MS`). */
const DEFAULT_API_COMMAND_TIMEOUT_MS = 2_000;

/** Ceiling of the reconnection backoff: a killed connection is back within this. */
const MAX_RECONNECT_DELAY_MS = 2_000;

/**
 * Pause before a command that met a closed connection or `CLUSTERDOWN` is
 * retried on a fresh slot map. A failover takes the cluster's node timeout
 * plus an election (seconds), so a few hundred milliseconds between attempts
 * is frequent enough.
 */
const CLUSTER_RETRY_DELAY_MS = 300;

/**
 * Retries (redirections included) one command gets on a cluster. The API's
 * budget (about 3 s of failover) answers a request 503 well before a load
 * balancer gives up on it; a worker's (about 30 s) rides out a whole failover
 * so a job is not failed for it.
 */
const CLUSTER_REDIRECTIONS: Readonly<Record<RedisRole, number>> = { api: 10, worker: 100, subscriber: 100 };

/**
 * `deployment` (the queue prefix) goes into the connection name, so an
 * operator reading `CLIENT LIST` on a shared Redis sees whose connection is
 * whose, and can kill one deployment's without touching the others'.
 */
export function createRedisConnection(endpoint: string, role: RedisRole, deployment?: string, apiCommandTimeoutMs?: number): Redis;
export function createRedisConnection(
  endpoint: RedisEndpoint,
  role: RedisRole,
  deployment?: string,
  apiCommandTimeoutMs?: number,
): RedisClient;
export function createRedisConnection(
  endpoint: RedisEndpoint,
  role: RedisRole,
  deployment?: string,
  apiCommandTimeoutMs = DEFAULT_API_COMMAND_TIMEOUT_MS,
): RedisClient {
  const options: RedisOptions = {
    connectionName: deployment === undefined ? `compactd-${role}` : `compactd-${role}@${deployment}`,
    // BullMQ workers block on Redis and must never see a command fail because
    // a reconnection took long; it refuses connections without this.
    maxRetriesPerRequest: role === "api" ? API_RETRIES_PER_REQUEST : null,
    retryStrategy: (attempt) => Math.min(attempt * 100, MAX_RECONNECT_DELAY_MS),
    // A replica promoted or demoted under us answers READONLY: reconnect (the
    // address then resolves to the new primary) and resend the command.
    reconnectOnError: (error) => (error.message.startsWith("READONLY") ? 2 : false),
    enableReadyCheck: true,
    ...(role === "api" && { enableOfflineQueue: false, commandTimeout: apiCommandTimeoutMs }),
  };
  if (typeof endpoint === "string") return new Redis(endpoint, options);
  return new Cluster(endpoint.map(clusterNode), clusterOptions(endpoint, role, options));
}

function clusterOptions(nodes: readonly string[], role: RedisRole, nodeOptions: RedisOptions): ClusterOptions {
  const first = new URL(nodes[0] ?? "redis://127.0.0.1:6379");
  const username = decodeURIComponent(first.username);
  const password = decodeURIComponent(first.password);
  return {
    redisOptions: {
      ...nodeOptions,
      // Cluster mode re-reads the slot map instead of reconnecting to one address.
      reconnectOnError: undefined,
      ...(username !== "" && { username }),
      ...(password !== "" && { password }),
      ...(first.protocol === "rediss:" && { tls: {} }),
    },
    clusterRetryStrategy: (attempt) => Math.min(attempt * 100, MAX_RECONNECT_DELAY_MS),
    retryDelayOnFailover: CLUSTER_RETRY_DELAY_MS,
    retryDelayOnClusterDown: CLUSTER_RETRY_DELAY_MS,
    retryDelayOnTryAgain: CLUSTER_RETRY_DELAY_MS,
    maxRedirections: CLUSTER_REDIRECTIONS[role],
    // Writes and reads both go to masters: a replica may lag behind a job's state.
    scaleReads: "master",
    // Managed services with TLS (ElastiCache, MemoryDB) announce nodes by
    // address, but their certificates name the host: connect by the name given.
    ...(first.protocol === "rediss:" && { dnsLookup: (address, callback) => callback(null, address) }),
  };
}

function clusterNode(url: string): { host: string; port: number } {
  const parsed = new URL(url);
  return { host: parsed.hostname, port: parsed.port === "" ? 6379 : Number(parsed.port) };
}

/**
 * Closes a connection politely, and drops it if Redis is unreachable (QUIT
 * would wait for a reconnection that may never come).
 */
export async function closeRedisConnection(redis: RedisClient): Promise<void> {
  if (redis.status === "end") return;
  if (redis.status !== "ready") {
    redis.disconnect();
    return;
  }
  try {
    await redis.quit();
  } catch {
    redis.disconnect();
  }
}
