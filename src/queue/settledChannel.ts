/**
 * "This job has just finished", broadcast to every API process.
 *
 * A request holding `?wait=N` learns that its job finished from here instead
 * of reading the job again every half second: two thousand waiters cost two
 * thousand Redis reads per finished job they wait for, not 27,000 reads a
 * second. The broadcast is made by the script that stores the outcome
 * (ResultStore.settleOnce), after storing it, so a waiter that reads the job
 * on hearing it sees the outcome.
 *
 * Pub/sub delivers at most once, and nothing while a subscriber is
 * reconnecting: the listener is told when its subscription is (re)established
 * so waiters read their jobs again then, and a broadcast lost at any other
 * moment only costs the waiter its wait (it answers with the job as it was).
 */
import type { RedisClient } from "./redisConnection.js";
import type { ServiceKeys } from "./queueNames.js";

export interface SettledListener {
  /** Called with each job id settled from now on. */
  readonly onSettled: (jobId: string) => void;
  /** Called whenever the subscription is (re)established; broadcasts may have been missed before it. */
  readonly onResubscribed: () => void;
}

/**
 * Listens on `subscriber`, a connection dedicated to it (a subscribed
 * connection can run no other command); ioredis resubscribes by itself after
 * a reconnection.
 */
export async function listenForSettled(subscriber: RedisClient, keys: ServiceKeys, listener: SettledListener): Promise<void> {
  subscriber.on("message", (channel: string, jobId: string) => {
    if (channel === keys.settledChannel) listener.onSettled(jobId);
  });
  subscriber.on("ready", listener.onResubscribed);
  await subscriber.subscribe(keys.settledChannel);
}
