/**
 * Whether the service's Redis can serve its queues right now: the probe
 * behind both processes' /readyz.
 *
 * A PING proves little on a cluster: it reaches any node, and answers while
 * the master that owns the queue's slot is dead and its replica not yet
 * promoted (every queue command then fails). So the probe reads a key in the
 * queue's own slot, which ioredis routes to that slot's current owner; on a
 * standalone Redis it is as cheap as a PING. Bounded, because a worker's
 * connection waits for Redis without limit.
 */
import { COMPACTION_QUEUE } from "./queueNames.js";
import type { RedisClient } from "./redisConnection.js";

/** How long the probe waits for the slot's owner to answer. */
export const READY_PROBE_MS = 1_000;

export async function queueSlotAnswers(redis: RedisClient, prefix: string, timeoutMs = READY_PROBE_MS): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs);
  });
  const probe = redis.exists(`${prefix}:${COMPACTION_QUEUE}:meta`).then(
    () => true,
    () => false,
  );
  try {
    return await Promise.race([probe, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
