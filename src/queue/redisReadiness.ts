/**
 * Whether the service's Redis can serve its queues right now: the probe
 * behind both processes' /readyz.
 *
 * A PING proves little on a cluster: it reaches any node, and answers while
 * the master that owns the queue's slot is dead and its replica not yet
 * promoted (every queue command then fails). So the probe reads a key in the
 * queue's own slot (each shard's), which ioredis routes to that slot's current owner; on a
 * standalone Redis it is as cheap as a PING. Bounded, because a worker's
 * connection waits for Redis without limit.
 */
import type { CompactionQueue, CompactionQueues } from "./compactionQueue.js";
import type { RedisClient } from "./redisConnection.js";

/** How long the probe waits for the slot's owner to answer. */
export const READY_PROBE_MS = 1_000;

/** Every shard's slot answers: a shard without a master would leave its conversations' jobs waiting. */
export async function everyShardAnswers(redis: RedisClient, queues: CompactionQueues): Promise<boolean> {
  const answers = await Promise.all(queues.shards.map((queue) => queueSlotAnswers(redis, queue)));
  return answers.every(Boolean);
}

async function queueSlotAnswers(redis: RedisClient, queue: CompactionQueue): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), READY_PROBE_MS);
  });
  const probe = redis.exists(`${queue.qualifiedName}:meta`).then(
    () => true,
    () => false,
  );
  try {
    return await Promise.race([probe, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
