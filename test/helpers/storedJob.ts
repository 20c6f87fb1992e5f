/** A compaction job as the API stored it in Redis, read like a worker reads it: its data through BullMQ, its payload from its key. */
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import type { Config } from "../../src/config.js";
import type { CompactionJobData } from "../../src/queue/compactionJob.js";
import { decodePayload } from "../../src/queue/payloadCodec.js";
import { PayloadStore } from "../../src/queue/payloadStore.js";
import { COMPACTION_QUEUE, serviceKeys } from "../../src/queue/queueNames.js";

type StoreConfig = Pick<Config, "redisUrl" | "queuePrefix">;

export async function storedJobData(config: StoreConfig, id: string): Promise<CompactionJobData> {
  const queue = new Queue<CompactionJobData>(COMPACTION_QUEUE, { connection: { url: config.redisUrl }, prefix: config.queuePrefix });
  try {
    const job = await queue.getJob(id);
    if (job === undefined) throw new Error(`no job ${id}`);
    return job.data;
  } finally {
    await queue.close();
  }
}

/** The conversation job `id` (its data `data`) was queued with, decoded; throws when its payload is gone. */
export async function storedPayload(config: StoreConfig, id: string, data: CompactionJobData): Promise<unknown> {
  const redis = new Redis(config.redisUrl);
  try {
    const packed = await new PayloadStore(redis, serviceKeys(config.queuePrefix)).read(id, data);
    if (packed === undefined) throw new Error(`job ${id} has no payload`);
    return decodePayload(packed);
  } finally {
    redis.disconnect();
  }
}
