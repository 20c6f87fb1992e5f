/**
 * Scenario 1's ceiling: BullMQ alone, with the job data the API stores for a
 * ~100 KB conversation and its compressed payload written to a key beside
 * each job (as payloadStore.ts does), and a processor that only reads and
 * deletes that key. However fast the service's own work gets, it cannot move
 * jobs through Redis faster than this.
 *
 * Producer and worker share the bench process, as the load generator and a
 * worker share the machine in the other scenarios; Redis gets the other core.
 */
import { performance } from "node:perf_hooks";
import { Queue, Worker } from "bullmq";
import { randomUUID } from "node:crypto";
import type { CompactionSubmission } from "../../src/queue/compactionJob.js";
import { closeRedisConnection, createRedisConnection } from "../../src/queue/redisConnection.js";
import { deleteKeysUnder, TEST_REDIS_URL, testPrefix } from "../../test/helpers/redisTestPrefix.js";

export interface CeilingPlan {
  readonly jobs: number;
  /** Adds in flight at once, as many API requests would have. */
  readonly parallelAdds: number;
  /** The service's default WORKER_CONCURRENCY. */
  readonly workerConcurrency: number;
}

export interface CeilingResult {
  /** Jobs per second from the first add to the last completion. */
  readonly rate: number;
  readonly jobs: number;
  readonly jobDataBytes: number;
  readonly payloadBytes: number;
}

const QUEUE = "ceiling";

export async function measureQueueCeiling({ data, payload }: CompactionSubmission, plan: CeilingPlan): Promise<CeilingResult> {
  const prefix = testPrefix("bench-ceiling");
  const producer = createRedisConnection(TEST_REDIS_URL, "worker", prefix);
  const consumer = createRedisConnection(TEST_REDIS_URL, "worker", prefix);
  const queue = new Queue<{ readonly payloadKey: string }>(QUEUE, { connection: producer, prefix });
  const bytes = Buffer.from(payload);
  const worker = new Worker<{ readonly payloadKey: string }>(QUEUE, async (job) => {
    await consumer.getBuffer(job.data.payloadKey);
    await consumer.unlink(job.data.payloadKey);
  }, {
    connection: consumer,
    prefix,
    concurrency: plan.workerConcurrency,
    autorun: false,
  });
  try {
    let completed = 0;
    const allDone = new Promise<number>((resolve) => {
      worker.on("completed", () => {
        if (++completed === plan.jobs) resolve(performance.now());
      });
    });
    await worker.waitUntilReady();
    const started = performance.now();
    void worker.run();
    let next = 0;
    const lane = async (): Promise<void> => {
      while (next < plan.jobs) {
        next++;
        const payloadKey = `${prefix}:payload:${randomUUID()}`;
        await producer.set(payloadKey, bytes);
        await queue.add("noop", { ...data, payloadKey });
      }
    };
    await Promise.all(Array.from({ length: plan.parallelAdds }, lane));
    const finished = await allDone;
    return { rate: plan.jobs / ((finished - started) / 1000), jobs: plan.jobs, jobDataBytes: Buffer.byteLength(JSON.stringify(data)), payloadBytes: bytes.length };
  } finally {
    await worker.close();
    await queue.close();
    await Promise.all([producer, consumer].map(closeRedisConnection));
    await deleteKeysUnder(prefix);
  }
}
