/** A compaction job's data as the API stored it in Redis, read through BullMQ like a worker reads it. */
import { Queue } from "bullmq";
import type { Config } from "../../src/config.js";
import type { CompactionJobData } from "../../src/queue/compactionJob.js";
import { COMPACTION_QUEUE } from "../../src/queue/queueNames.js";

export async function storedJobData(config: Pick<Config, "redisUrl" | "queuePrefix">, id: string): Promise<CompactionJobData> {
  const queue = new Queue<CompactionJobData>(COMPACTION_QUEUE, { connection: { url: config.redisUrl }, prefix: config.queuePrefix });
  try {
    const job = await queue.getJob(id);
    if (job === undefined) throw new Error(`no job ${id}`);
    return job.data;
  } finally {
    await queue.close();
  }
}
