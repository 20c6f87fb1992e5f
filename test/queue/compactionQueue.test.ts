import { Worker } from "bullmq";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Reason } from "../../src/core/compactor.js";
import { idempotentJobSeed, jobIdInShard, newJobId, type CompactionJobData } from "../../src/queue/compactionJob.js";
import { backlogOf, submitCompaction, type CompactionQueue } from "../../src/queue/compactionQueue.js";
import { COMPACTION_QUEUE } from "../../src/queue/queueNames.js";
import { closeRedisConnection, createRedisConnection } from "../../src/queue/redisConnection.js";
import { TEST_REDIS_URL } from "../helpers/redisTestPrefix.js";
import { openTestQueue, type TestQueue } from "../helpers/testQueue.js";
import { testJobData } from "../helpers/jobData.js";

let testQueue: TestQueue;
let prefix: string;
let queue: CompactionQueue;

beforeEach(async () => {
  testQueue = await openTestQueue("queue", 2);
  ({ prefix, queue } = testQueue);
});

afterEach(() => testQueue.close());

/** A bare BullMQ worker on the test's queue; close it to release its connection too. */
function startWorker(process: (data: CompactionJobData) => Promise<unknown>, concurrency = 1) {
  const connection = createRedisConnection(TEST_REDIS_URL, "worker");
  const worker = new Worker<CompactionJobData>(COMPACTION_QUEUE, (job) => process(job.data), { connection, prefix, concurrency });
  return Object.assign(worker, {
    async stop() {
      await worker.close();
      await closeRedisConnection(connection);
    },
  });
}

function jobData(overrides: Partial<CompactionJobData> = {}): CompactionJobData {
  return testJobData({ payload: "", requestDigest: "digest-a", ...overrides });
}

describe("submitCompaction", () => {
  it("returns the stored job for a repeated idempotency key instead of adding a second", async () => {
    const id = jobIdInShard(idempotentJobSeed("acme", "key-1"), 0);
    const first = await submitCompaction(queue, id, jobData({ metadata: { n: 1 } }), true);
    const second = await submitCompaction(queue, id, jobData({ metadata: { n: 2 } }), true);
    expect(first.kind).toBe("created");
    expect(second.kind).toBe("replayed");
    if (second.kind !== "replayed") return;
    expect(second.job.id).toBe(id);
    expect(second.job.data.metadata).toEqual({ n: 1 });
    expect(await backlogOf([queue])).toBe(1);
  });

  it("refuses an idempotency key reused for a different request", async () => {
    const id = jobIdInShard(idempotentJobSeed("acme", "key-2"), 0);
    await submitCompaction(queue, id, jobData(), true);
    const reused = await submitCompaction(queue, id, jobData({ requestDigest: "digest-b" }), true);
    expect(reused).toEqual({ kind: "keyReused", jobId: id });
  });

  it("gives the same idempotency key of two tenants two jobs", async () => {
    const a = await submitCompaction(queue, jobIdInShard(idempotentJobSeed("acme", "k"), 0), jobData(), true);
    const b = await submitCompaction(queue, jobIdInShard(idempotentJobSeed("globex", "k"), 0), jobData({ tenant: "globex" }), true);
    expect(a.kind).toBe("created");
    expect(b.kind).toBe("created");
  });

  it("refuses a second compaction of a conversation in flight, naming the first job", async () => {
    const firstId = newJobId();
    await submitCompaction(queue, firstId, jobData({ conversationId: "conv-1" }), false);
    const second = await submitCompaction(queue, newJobId(), jobData({ conversationId: "conv-1" }), false);
    expect(second).toEqual({ kind: "inFlight", jobId: firstId });
  });

  it("keeps conversations of different tenants with the same id apart", async () => {
    await submitCompaction(queue, newJobId(), jobData({ conversationId: "conv-1" }), false);
    const other = await submitCompaction(queue, newJobId(), jobData({ tenant: "globex", conversationId: "conv-1" }), false);
    expect(other.kind).toBe("created");
  });

  it("accepts the next compaction of a conversation once the first is removed", async () => {
    const firstId = newJobId();
    await submitCompaction(queue, firstId, jobData({ conversationId: "conv-1" }), false);
    await (await queue.getJob(firstId))?.remove();
    const next = await submitCompaction(queue, newJobId(), jobData({ conversationId: "conv-1" }), false);
    expect(next.kind).toBe("created");
  });

  it("releases the conversation when its job completes and when it fails for good", async () => {
    const worker = startWorker(async (data) => {
      if (data.metadata === "fail") throw new Error("boom");
      return "done";
    });
    try {
      const finished = new Set<string>();
      worker.on("completed", (job) => finished.add(job.id ?? ""));
      worker.on("failed", (job) => {
        if (job !== undefined && job.attemptsMade >= 2) finished.add(job.id ?? "");
      });
      const ok = newJobId();
      const bad = newJobId();
      await submitCompaction(queue, ok, jobData({ conversationId: "conv-ok" }), false);
      await submitCompaction(queue, bad, jobData({ conversationId: "conv-bad", metadata: "fail" }), false);
      await expect.poll(() => finished.size, { timeout: 10_000 }).toBe(2);
      expect((await submitCompaction(queue, newJobId(), jobData({ conversationId: "conv-ok" }), false)).kind).toBe("created");
      expect((await submitCompaction(queue, newJobId(), jobData({ conversationId: "conv-bad" }), false)).kind).toBe("created");
    } finally {
      await worker.stop();
    }
  });

  it("serves overflow compactions before threshold ones queued earlier", async () => {
    const order: Reason[] = [];
    for (let i = 0; i < 4; i++) await submitCompaction(queue, newJobId(), jobData({ reason: "threshold" }), false);
    await submitCompaction(queue, newJobId(), jobData({ reason: "manual" }), false);
    await submitCompaction(queue, newJobId(), jobData({ reason: "overflow" }), false);
    const worker = startWorker(async (data) => order.push(data.reason));
    try {
      await expect.poll(() => order.length, { timeout: 10_000 }).toBe(6);
      expect(order).toEqual(["overflow", "manual", "threshold", "threshold", "threshold", "threshold"]);
    } finally {
      await worker.stop();
    }
  });
});

describe("backlogOf", () => {
  it("counts prioritized jobs and jobs waiting out a retry backoff", async () => {
    await submitCompaction(queue, newJobId(), jobData({ reason: "overflow" }), false);
    await submitCompaction(queue, newJobId(), jobData({ reason: "threshold" }), false);
    await queue.add("compact", jobData(), { jobId: newJobId(), delay: 60_000 });
    expect(await backlogOf([queue])).toBe(3);
  });
});
