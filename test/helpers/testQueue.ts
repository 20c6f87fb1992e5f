/**
 * A compaction queue of the test's own, on a fresh key prefix of the test
 * Redis; `close()` releases the queue and its connection and deletes every key
 * under the prefix.
 */
import type { Redis } from "ioredis";
import { createCompactionQueue, type CompactionQueue } from "../../src/queue/compactionQueue.js";
import { closeRedisConnection, createRedisConnection } from "../../src/queue/redisConnection.js";
import { deleteKeysUnder, TEST_REDIS_URL, testPrefix } from "./redisTestPrefix.js";

export interface TestQueue {
  readonly prefix: string;
  readonly redis: Redis;
  readonly queue: CompactionQueue;
  close(): Promise<void>;
}

export async function openTestQueue(name: string, attempts = 1): Promise<TestQueue> {
  const prefix = testPrefix(name);
  const redis = createRedisConnection(TEST_REDIS_URL, "api");
  const queue = createCompactionQueue(redis, { prefix, attempts, backoffMs: 10, retentionSeconds: 60 });
  await queue.waitUntilReady();
  return {
    prefix,
    redis,
    queue,
    async close() {
      await queue.close();
      await closeRedisConnection(redis);
      await deleteKeysUnder(prefix);
    },
  };
}
