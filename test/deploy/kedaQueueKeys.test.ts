import { randomUUID } from "node:crypto";
import { Worker } from "bullmq";
import type { Redis } from "ioredis";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Reason } from "../../src/core/compactor.js";
import { newJobId, type CompactionJobData } from "../../src/queue/compactionJob.js";
import { submitCompaction, type CompactionQueue } from "../../src/queue/compactionQueue.js";
import { COMPACTION_QUEUE } from "../../src/queue/queueNames.js";
import { closeRedisConnection, createRedisConnection } from "../../src/queue/redisConnection.js";
import { TEST_REDIS_URL } from "../helpers/redisTestPrefix.js";
import { openTestQueue, type TestQueue } from "../helpers/testQueue.js";
import { kedaRedisStates } from "./chart.js";

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

function submit(reason: Reason): Promise<unknown> {
  const data: CompactionJobData = {
    tenant: "acme",
    payload: "",
    replaces: { count: 0, digest: "" },
    contextWindow: 100_000,
    settings: {},
    reason,
    submissionId: randomUUID(),
    requestDigest: randomUUID(),
  };
  return submitCompaction(queue, newJobId(), data, false);
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
