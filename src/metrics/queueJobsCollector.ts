import type { JobState, Queue } from "bullmq";
import type { Cluster, Redis } from "ioredis";
import { startLeaderLease } from "./leaderLease.js";
import type { Metrics } from "./metrics.js";

/**
 * Feeds `compactd_queue_jobs{queue,state}` from BullMQ's own counts.
 *
 * Queue sizes are a property of Redis, not of a process: if every API and
 * worker replica exported them, `sum(compactd_queue_jobs)` would multiply the
 * backlog by the replica count. So one process, the holder of a Redis lease
 * (leaderLease.ts), refreshes the gauge, and every other process exports no
 * sample for it. When the leader dies its lease lapses and another replica
 * takes over within the lease ttl.
 *
 * Refreshed on a timer rather than at scrape time, so a scrape never waits on
 * (or hangs with) Redis.
 */

/**
 * Every state BullMQ keeps a job in. Prioritized jobs sit in their own sorted
 * set, not in `waiting`: leaving the state out would hide every prioritized
 * backlog (all of ours: each reason has a priority).
 */
export const QUEUE_JOB_STATES: readonly JobState[] = [
  "waiting",
  "prioritized",
  "active",
  "delayed",
  "waiting-children",
  "completed",
  "failed",
];

export interface QueueJobsCollectorOptions {
  readonly metrics: Metrics;
  /** Holds the lease; any connection of the deployment's Redis. */
  readonly redis: Redis | Cluster;
  /** The deployment's queue prefix: one leader per deployment, whatever queues it has. */
  readonly prefix: string;
  readonly queues: readonly Queue[];
  /** Default 5 s. */
  readonly refreshMs?: number;
  /** Default 15 s: how long the gauge may go missing after the leader dies. */
  readonly leaseTtlMs?: number;
}

export interface QueueJobsCollector {
  isLeader(): boolean;
  /** Fetches the counts now (when leading); the timer calls it too. */
  refresh(): Promise<void>;
  close(): Promise<void>;
}

export function startQueueJobsCollector({
  metrics,
  redis,
  prefix,
  queues,
  refreshMs = 5_000,
  leaseTtlMs = 15_000,
}: QueueJobsCollectorOptions): QueueJobsCollector {
  const gauge = metrics.queueJobs;
  let refreshing: Promise<void> | undefined;

  const fetchCounts = async (): Promise<void> => {
    const counts = await Promise.all(queues.map((queue) => queue.getJobCounts(...QUEUE_JOB_STATES)));
    // Leadership may have moved while we waited on Redis.
    if (!lease.isLeader()) return;
    // A sharded queue's shards share its name: the gauge reports their sum.
    const byName = new Map<string, Record<string, number>>();
    queues.forEach((queue, index) => {
      const sum = byName.get(queue.name) ?? {};
      for (const state of QUEUE_JOB_STATES) sum[state] = (sum[state] ?? 0) + (counts[index]?.[state] ?? 0);
      byName.set(queue.name, sum);
    });
    for (const [queue, sum] of byName) for (const state of QUEUE_JOB_STATES) gauge.set({ queue, state }, sum[state] ?? 0);
  };

  const refresh = (): Promise<void> => {
    if (!lease.isLeader()) return Promise.resolve();
    refreshing ??= fetchCounts()
      // Stale sizes mislead more than missing ones.
      .catch(() => gauge.reset())
      .finally(() => {
        refreshing = undefined;
      });
    return refreshing;
  };

  const lease = startLeaderLease({
    redis,
    key: `${prefix}:metrics:queue-jobs-leader`,
    ttlMs: leaseTtlMs,
    onChange: (leader) => {
      if (leader) void refresh();
      else gauge.reset();
    },
  });

  const timer = setInterval(() => void refresh(), refreshMs);
  timer.unref();

  return {
    isLeader: () => lease.isLeader(),
    refresh,
    async close() {
      clearInterval(timer);
      await lease.close();
      gauge.reset();
    },
  };
}
