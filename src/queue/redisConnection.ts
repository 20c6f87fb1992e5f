/**
 * Redis connections for the API and the workers.
 *
 * Both roles must survive a Redis restart, a failover or an operator's
 * `CLIENT KILL` without losing work, but they fail differently: a worker waits
 * for Redis as long as it takes (its jobs are safe in Redis and BullMQ's
 * blocking calls demand it), while the API gives up on a command after a few
 * reconnection attempts so an HTTP request answers 503 instead of hanging
 * until the load balancer times it out.
 */
import { Redis, type RedisOptions } from "ioredis";

export type RedisRole = "api" | "worker" | "subscriber";

/** Reconnection attempts an API command rides out before it fails the request. */
const API_RETRIES_PER_REQUEST = 3;

/** Ceiling of the reconnection backoff: a killed connection is back within this. */
const MAX_RECONNECT_DELAY_MS = 2_000;

/**
 * `deployment` (the queue prefix) goes into the connection name, so an
 * operator reading `CLIENT LIST` on a shared Redis sees whose connection is
 * whose, and can kill one deployment's without touching the others'.
 */
export function createRedisConnection(url: string, role: RedisRole, deployment?: string): Redis {
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
  };
  return new Redis(url, options);
}

/**
 * Closes a connection politely, and drops it if Redis is unreachable (QUIT
 * would wait for a reconnection that may never come).
 */
export async function closeRedisConnection(redis: Redis): Promise<void> {
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
