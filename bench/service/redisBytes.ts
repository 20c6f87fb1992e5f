/**
 * Scenario 3: what a queued ~100 KB job costs Redis.
 *
 * Jobs are queued as the API queues them (see queuedJobs.ts) with no worker,
 * then measured two ways: `MEMORY USAGE` of each job's two keys (its hash:
 * the job data and BullMQ's fields; its payload key: the compressed
 * conversation), and the growth of Redis's `used_memory` over all of them
 * divided by their number, which also counts the prioritized set, the events
 * stream and the allocator's overhead. Each is set against the request's raw
 * JSON.
 */
import type { Redis } from "ioredis";
import { createCompactionQueue } from "../../src/queue/compactionQueue.js";
import { PayloadStore } from "../../src/queue/payloadStore.js";
import { COMPACTION_QUEUE, serviceKeys } from "../../src/queue/queueNames.js";
import { deleteKeysUnder, testPrefix } from "../../test/helpers/redisTestPrefix.js";
import { median } from "../timing.js";
import { addJobs, submissionFor } from "./queuedJobs.js";
import type { Workload } from "./workload.js";

export interface RedisBytesResult {
  readonly jobs: number;
  /** Median raw JSON of the requests queued. */
  readonly rawBytes: number;
  /** MEMORY USAGE of a job's hash and payload key together over its request's raw JSON: median and largest. */
  readonly jobRatioMedian: number;
  readonly jobRatioMax: number;
  /** The conversation with the largest share. */
  readonly largest: string;
  /** MEMORY USAGE, medians: the job's hash, its payload key, both together. */
  readonly hashBytesMedian: number;
  readonly payloadBytesMedian: number;
  readonly jobBytesMedian: number;
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
    const submissions = await Promise.all(workloads.map((w) => submissionFor(w)));
    const keys = serviceKeys(prefix);
    const payloads = new PayloadStore(redis, keys);
    // The queue's own keys (meta, events stream) exist before the first job is counted.
    await queue.waitUntilReady();
    await addJobs(queue, payloads, submissions, 1);
    const before = await usedMemory(redis);
    const ids = await addJobs(queue, payloads, submissions, jobs);
    const after = await usedMemory(redis);

    const memoryUsage = async (key: string): Promise<number> => Number(await redis.call("MEMORY", "USAGE", key, "SAMPLES", "0"));
    const ratios: number[] = [];
    const hashSizes: number[] = [];
    const payloadSizes: number[] = [];
    for (const [k, id] of ids.entries()) {
      const job = await queue.getJob(id);
      const hash = await memoryUsage(`${prefix}:${COMPACTION_QUEUE}:${id}`);
      const payload = await memoryUsage(keys.payload(id, job!.data.submissionId));
      if (!(payload > 0)) throw new Error(`job ${id} has no payload key`);
      hashSizes.push(hash);
      payloadSizes.push(payload);
      ratios.push((hash + payload) / workloads[k % workloads.length]!.jsonBytes);
    }
    const largest = ratios.indexOf(Math.max(...ratios));
    const rawBytes = median(ids.map((_, k) => workloads[k % workloads.length]!.jsonBytes));
    const usedMemoryPerJob = (after - before) / jobs;
    return {
      jobs,
      rawBytes,
      jobRatioMedian: median(ratios),
      jobRatioMax: ratios[largest]!,
      largest: workloads[largest % workloads.length]!.name,
      hashBytesMedian: median(hashSizes),
      payloadBytesMedian: median(payloadSizes),
      jobBytesMedian: median(hashSizes.map((hash, k) => hash + payloadSizes[k]!)),
      usedMemoryPerJob,
      usedMemoryRatio: usedMemoryPerJob / rawBytes,
    };
  } finally {
    await queue.close();
    await deleteKeysUnder(prefix);
  }
}
