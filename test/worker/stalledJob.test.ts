import { Worker } from "bullmq";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { COMPACTION_QUEUE } from "../../src/queue/queueNames.js";
import { closeRedisConnection, createRedisConnection } from "../../src/queue/redisConnection.js";
import { markedRequest } from "../helpers/markedConversation.js";
import { startServiceHarness, type ServiceHarness } from "../helpers/serviceHarness.js";
import { waitUntil } from "../helpers/waitUntil.js";

let h: ServiceHarness;
beforeAll(async () => {
  h = await startServiceHarness("stalled", { workers: 0 });
});
afterAll(async () => {
  await h.close();
});

describe("a job that stalls more often than allowed", () => {
  it("is failed as stalled, and its callback still reports it", async () => {
    const submitted = await h.submit(markedRequest("stall-limit", { callbackUrl: h.receiver.url("/stalled") }));
    const id = String(submitted.body.id);
    // A consumer takes the job and vanishes without a trace: its lock is never renewed.
    const connection = createRedisConnection(h.config.redisUrl, "worker");
    const vanishing = new Worker(COMPACTION_QUEUE, null, { connection, prefix: h.config.queuePrefix, autorun: false, lockDuration: 300 });
    try {
      expect((await vanishing.getNextJob("vanished-token"))?.id).toBe(id);
      // A worker that allows no takeover: the first stall fails the job.
      await h.startWorker({ maxStalledCount: 0 });
      expect((await h.view(id, 20)).status).toBe("failed");
      await waitUntil(() => h.receiver.received.some((callback) => callback.body.includes(id)), "the failure callback arrives");
      const event = JSON.parse(h.receiver.received.find((callback) => callback.body.includes(id))!.body);
      expect(event).toMatchObject({ type: "compaction.failed", id, error: { code: "stalled" } });
      expect(await h.view(id)).toMatchObject({ status: "failed", error: { code: "stalled" } });
      const stalled = await h.workerMetrics.registry.getSingleMetricAsString("compactd_stalled_jobs_total");
      expect(stalled).toMatch(/compactd_stalled_jobs_total [1-9]/);
    } finally {
      await vanishing.close(true);
      await closeRedisConnection(connection);
    }
  });
});
