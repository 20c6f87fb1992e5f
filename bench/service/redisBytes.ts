/**
 * Scenario 3: what a queued ~100 KB job costs Redis.
 *
 * Jobs are queued as the API queues them (see queuedJobs.ts) with no worker,
 * then measured two ways: `MEMORY USAGE` of each job's hash (the job data with
 * its compressed payload, plus BullMQ's fields), and the growth of Redis's
 * `used_memory` over all of them divided by their number, which also counts
 * the prioritized set, the events stream and the allocator's overhead. Each
 * is set against the request's raw JSON.
 */
import type { Redis } from "ioredis";
import { createCompactionQueue } from "../../src/queue/compactionQueue.js";
import { COMPACTION_QUEUE } from "../../src/queue/queueNames.js";
import { deleteKeysUnder, testPrefix } from "../../test/helpers/redisTestPrefix.js";
import { median } from "../timing.js";
import { addJobs, jobDataFor } from "./queuedJobs.js";
import type { Workload } from "./workload.js";

export interface RedisBytesResult {
  readonly jobs: number;
  /** Median raw JSON of the requests queued. */
  readonly rawBytes: number;
  /** MEMORY USAGE of a job hash over its request's raw JSON: median and largest. */
  readonly hashRatioMedian: number;
  readonly hashRatioMax: number;
  /** The conversation with the largest share. */
  readonly largest: string;
  readonly hashBytesMedian: number;
  /** used_memory growth per job over the median raw JSON. */
  readonly usedMemoryPerJob: number;
  readonly usedMemoryRatio: number;
}

async function usedMemory(redis: Redis): Promise<number> {
  return Number(/used_memory:(\d+)/.exec(await redis.info("memory"))?.[1]);
}

export async function measureRedisBytes(workloads: readonly Workload[], jobs: number, redis: Redis): Promise<RedisBytesResult> {
  const prefix = testPrefix("bench-redis-bytes");
  const queue = createCompactionQueue(redis, { prefix, attempts: 3, backoffMs: 2_000, retentionSeconds: 3_600 });
  try {
    const data = await Promise.all(workloads.map((w) => jobDataFor(w)));
    // The queue's own keys (meta, events stream) exist before the first job is counted.
    await queue.waitUntilReady();
    await addJobs(queue, data, 1);
    const before = await usedMemory(redis);
    const ids = await addJobs(queue, data, jobs);
    const after = await usedMemory(redis);

    const ratios: number[] = [];
    const sizes: number[] = [];
    for (const [k, id] of ids.entries()) {
      const bytes = Number(await redis.call("MEMORY", "USAGE", `${prefix}:${COMPACTION_QUEUE}:${id}`, "SAMPLES", "0"));
      sizes.push(bytes);
      ratios.push(bytes / workloads[k % workloads.length]!.jsonBytes);
    }
    const largest = ratios.indexOf(Math.max(...ratios));
    const rawBytes = median(ids.map((_, k) => workloads[k % workloads.length]!.jsonBytes));
    const usedMemoryPerJob = (after - before) / jobs;
    return {
      jobs,
      rawBytes,
      hashRatioMedian: median(ratios),
      hashRatioMax: ratios[largest]!,
      largest: workloads[largest % workloads.length]!.name,
      hashBytesMedian: median(sizes),
      usedMemoryPerJob,
      usedMemoryRatio: usedMemoryPerJob / rawBytes,
    };
  } finally {
    await queue.close();
    await deleteKeysUnder(prefix);
  }
}
