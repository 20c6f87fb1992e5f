import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import { createMetrics, type Metrics } from "../../src/metrics/metrics.js";
import { type QueueJobsCollector, startQueueJobsCollector } from "../../src/metrics/queueJobsCollector.js";
import { shardPrefix } from "../../src/queue/queueNames.js";
import { deleteKeysUnder, TEST_REDIS_URL, testPrefix } from "../helpers/redisTestPrefix.js";
import { waitUntil } from "../helpers/waitUntil.js";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** One replica: its own Redis connection, queue handle, registry and collector. */
function replica(prefix: string): { metrics: Metrics; collector: QueueJobsCollector } {
  const redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
  const queue = new Queue("compactions", { connection: redis, prefix });
  const metrics = createMetrics();
  const collector = startQueueJobsCollector({ metrics, redis, prefix, queues: [queue], refreshMs: 100, leaseTtlMs: 3_000 });
  cleanups.push(async () => {
    await collector.close();
    await queue.close();
    redis.disconnect();
  });
  return { metrics, collector };
}

function samples(text: string): string[] {
  return text.split("\n").filter((line) => line.startsWith("compactd_queue_jobs{"));
}

describe("startQueueJobsCollector", () => {
  it("exports queue sizes from exactly one replica, prioritized jobs included", async () => {
    const prefix = testPrefix("queue-gauge");
    cleanups.push(() => deleteKeysUnder(prefix));
    const producer = new Queue("compactions", { connection: { url: TEST_REDIS_URL }, prefix });
    cleanups.push(() => producer.close());
    await producer.add("compact", {});
    await producer.add("compact", {});
    for (const priority of [1, 2, 3]) await producer.add("compact", {}, { priority });
    await producer.add("compact", {}, { delay: 60_000 });

    const replicas = [replica(prefix), replica(prefix), replica(prefix)];
    await waitUntil(() => replicas.some((r) => r.collector.isLeader()), "a replica leads");
    const leader = replicas.find((r) => r.collector.isLeader())!;
    await waitUntil(async () => samples(await leader.metrics.registry.metrics()).length > 0, "the leader has counted");

    const text = await leader.metrics.registry.metrics();
    expect(text).toContain('compactd_queue_jobs{queue="compactions",state="waiting"} 2');
    expect(text).toContain('compactd_queue_jobs{queue="compactions",state="prioritized"} 3');
    expect(text).toContain('compactd_queue_jobs{queue="compactions",state="delayed"} 1');
    expect(text).toContain('compactd_queue_jobs{queue="compactions",state="active"} 0');
    for (const follower of replicas.filter((r) => r !== leader)) {
      expect(samples(await follower.metrics.registry.metrics())).toEqual([]);
    }
  });

  it("moves the export to another replica when the leader shuts down", async () => {
    const prefix = testPrefix("queue-gauge-handover");
    cleanups.push(() => deleteKeysUnder(prefix));
    const producer = new Queue("compactions", { connection: { url: TEST_REDIS_URL }, prefix });
    cleanups.push(() => producer.close());
    await producer.add("compact", {}, { priority: 1 });

    const replicas = [replica(prefix), replica(prefix)];
    await waitUntil(() => replicas.some((r) => r.collector.isLeader()), "a replica leads");
    const leader = replicas.find((r) => r.collector.isLeader())!;
    const follower = replicas.find((r) => r !== leader)!;
    await leader.collector.close();

    expect(samples(await leader.metrics.registry.metrics())).toEqual([]);
    await waitUntil(
      async () => (await follower.metrics.registry.metrics()).includes('compactd_queue_jobs{queue="compactions",state="prioritized"} 1'),
      "the follower exports the sizes",
    );
  });

  it("reports a sharded queue once, as the sum of its shards", async () => {
    const prefix = testPrefix("queue-gauge-shards");
    const shards = [0, 1, 2].map((shard) => shardPrefix(prefix, shard));
    for (const shard of shards) cleanups.push(() => deleteKeysUnder(shard));
    const redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
    const queues = shards.map((shard) => new Queue("compactions", { connection: redis, prefix: shard }));
    cleanups.push(async () => {
      await Promise.all(queues.map((queue) => queue.close()));
      redis.disconnect();
    });
    for (const [index, queue] of queues.entries()) {
      for (let job = 0; job <= index; job++) await queue.add("compact", {}, { priority: 1 });
    }
    const metrics = createMetrics();
    const collector = startQueueJobsCollector({ metrics, redis, prefix, queues, refreshMs: 100, leaseTtlMs: 3_000 });
    cleanups.push(() => collector.close());
    await waitUntil(() => collector.isLeader(), "the collector leads");
    await collector.refresh();
    const prioritized = samples(await metrics.registry.metrics()).filter((line) => line.includes('state="prioritized"'));
    expect(prioritized).toEqual(['compactd_queue_jobs{queue="compactions",state="prioritized"} 6']);
  });
});
