import { randomUUID } from "node:crypto";
import { Worker } from "bullmq";
import type { Redis } from "ioredis";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Reason } from "../../src/core/compactor.js";
import { newJobId, shardFor, type CompactionJobData } from "../../src/queue/compactionJob.js";
import { createCompactionQueues, submitCompaction, type CompactionQueue } from "../../src/queue/compactionQueue.js";
import { COMPACTION_QUEUE, shardPrefix } from "../../src/queue/queueNames.js";
import { closeRedisConnection, createRedisConnection } from "../../src/queue/redisConnection.js";
import { deleteKeysUnder, TEST_REDIS_URL } from "../helpers/redisTestPrefix.js";
import { openTestQueue, type TestQueue } from "../helpers/testQueue.js";
import { kedaRedisStates, readTemplate } from "./chart.js";
import { testJobData } from "../helpers/jobData.js";

/**
 * What KEDA's Redis scaler reads from one key: it asks the key's type and
 * counts a sorted set, set, hash or list by its size (a missing key is 0);
 * any other type is an error, which stops scaling.
 */
async function kedaLength(redis: Redis, key: string): Promise<number> {
  const type = await redis.type(key);
  if (type === "zset") return redis.zcard(key);
  if (type === "list" || type === "none") return redis.llen(key);
  if (type === "set") return redis.scard(key);
  if (type === "hash") return redis.hlen(key);
  throw new Error(`KEDA's Redis scaler cannot count ${key}, a ${type}`);
}

let testQueue: TestQueue;
let prefix: string;
let redis: Redis;
let queue: CompactionQueue;

beforeEach(async () => {
  testQueue = await openTestQueue("keda");
  ({ prefix, redis, queue } = testQueue);
});

afterEach(() => testQueue.close());

function jobData(reason: Reason): CompactionJobData {
  return testJobData({ payload: "", reason, requestDigest: randomUUID() });
}

function submit(reason: Reason): Promise<unknown> {
  return submitCompaction(queue, newJobId(), jobData(reason), false);
}

/** The chart's trigger keys, `<prefix>:compactions:<state>`, as the ScaledObject names them. */
function triggerKeys(): Map<string, string> {
  return new Map(kedaRedisStates().map((state) => [state, `${prefix}:${COMPACTION_QUEUE}:${state}`]));
}

async function lengths(): Promise<Record<string, number>> {
  const entries = await Promise.all([...triggerKeys()].map(async ([state, key]) => [state, await kedaLength(redis, key)] as const));
  return Object.fromEntries(entries);
}

describe("KEDA's Redis triggers on the compaction queue", () => {
  it("see every queued compaction, all of them in the prioritized sorted set and none in the wait list", async () => {
    await Promise.all([submit("overflow"), submit("threshold"), submit("manual")]);
    expect(await lengths()).toEqual({ prioritized: 3, wait: 0, active: 0 });
  });

  it("keep counting a compaction while a worker runs it, so busy workers are not scaled away", async () => {
    await Promise.all([submit("overflow"), submit("threshold")]);
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let started!: () => void;
    const running = new Promise<void>((resolve) => {
      started = resolve;
    });
    const connection = createRedisConnection(TEST_REDIS_URL, "worker");
    const worker = new Worker<CompactionJobData>(
      COMPACTION_QUEUE,
      async () => {
        started();
        await held;
      },
      { connection, prefix, concurrency: 1 },
    );
    try {
      await running;
      expect(await lengths()).toEqual({ prioritized: 1, wait: 0, active: 1 });
    } finally {
      release();
      await worker.close();
      await closeRedisConnection(connection);
    }
  });
});

describe("KEDA's Redis triggers on a sharded compaction queue", () => {
  it("count every shard's jobs, and the scaled object scales on their sum", async () => {
    const shards = 3;
    const queues = createCompactionQueues(redis, shards, { prefix, attempts: 1, backoffMs: 10, retentionSeconds: 60 });
    try {
      const data = (conversationId: string): CompactionJobData => ({ ...jobData("threshold"), conversationId });
      for (let i = 0; i < 12; i++) {
        const id = newJobId(shardFor("acme", `conv-${i}`, "", shards));
        await submitCompaction(queues.of(id), id, data(`conv-${i}`), false);
      }
      let total = 0;
      for (let shard = 0; shard < shards; shard++) {
        for (const state of kedaRedisStates()) total += await kedaLength(redis, `${shardPrefix(prefix, shard)}:${COMPACTION_QUEUE}:${state}`);
      }
      expect(total).toBe(12);
      const template = readTemplate("worker-scaledobject.yaml");
      expect(template).toMatch(/range \$shard := until \$shards/);
      expect(template).toMatch(/formula: \{\{ join " \+ " \$triggers/);
      expect(template).toContain('name: {{ printf "s%d_%s" $shard $state }}');
      expect(template).toContain('$triggers = append $triggers (printf "s%d_%s" $shard $state)');
    } finally {
      await queues.close();
      for (let shard = 1; shard < shards; shard++) await deleteKeysUnder(shardPrefix(prefix, shard));
    }
  });
});
