/**
 * Cross-process cancellation of a running job.
 *
 * Only the worker that holds a job can abort its summarizer call, and the API
 * does not know which worker that is, so it broadcasts the job id and every
 * worker aborts the job if it holds it. A broadcast can be missed (a worker
 * reconnecting at that moment); the cancellation flag in the result store
 * backs it up: a worker checks it before compacting and again before storing
 * the result, so a missed broadcast costs at most a summarizer call, never a
 * cancelled job that completes.
 */
import type { RedisClient } from "./redisConnection.js";
import type { ServiceKeys } from "./queueNames.js";

export async function broadcastCancel(redis: RedisClient, keys: ServiceKeys, jobId: string): Promise<void> {
  await redis.publish(keys.cancelChannel, jobId);
}

/**
 * Calls `onCancel` with each job id broadcast from now on. `subscriber` is
 * dedicated to this (a subscribed connection can run no other command);
 * ioredis resubscribes by itself after a reconnection.
 */
export async function listenForCancels(
  subscriber: RedisClient,
  keys: ServiceKeys,
  onCancel: (jobId: string) => void,
): Promise<void> {
  subscriber.on("message", (channel: string, jobId: string) => {
    if (channel === keys.cancelChannel) onCancel(jobId);
  });
  await subscriber.subscribe(keys.cancelChannel);
}
