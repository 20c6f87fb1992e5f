/**
 * A job BullMQ failed on its own (it stalled more than COMPACTD_MAX_STALLED_COUNT
 * times) has no stored outcome until the failing worker's listener writes
 * one. A reader that comes first must not report it finished without that
 * outcome (no message, no finishedAt); it stores the stalled outcome itself.
 */
import { Queue, UnrecoverableError, Worker } from "bullmq";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { COMPACTION_QUEUE } from "../../src/queue/queueNames.js";
import { markedRequest } from "../helpers/markedConversation.js";
import { TEST_REDIS_URL } from "../helpers/redisTestPrefix.js";
import { startServiceHarness, type ServiceHarness } from "../helpers/serviceHarness.js";
import { waitUntil } from "../helpers/waitUntil.js";

let h: ServiceHarness;
beforeAll(async () => {
  h = await startServiceHarness("stalled-view", { workers: 0 });
});
afterAll(async () => {
  await h.close();
});

describe("a job failed by BullMQ before its outcome is stored", () => {
  it("is reported with the stalled outcome, stored, with its message and finish time", async () => {
    const { body } = await h.submit(markedRequest("stalled-view"));
    const id = String(body.id);
    // Plays BullMQ's stall limit: the job ends failed and nothing settles it.
    const failing = new Worker(
      COMPACTION_QUEUE,
      async () => {
        throw new UnrecoverableError("job stalled more than allowable limit");
      },
      { connection: { url: TEST_REDIS_URL }, prefix: h.config.queuePrefix },
    );
    const queue = new Queue(COMPACTION_QUEUE, { connection: { url: TEST_REDIS_URL }, prefix: h.config.queuePrefix });
    try {
      await waitUntil(async () => (await queue.getJobState(id)) === "failed", "BullMQ failed the job");
    } finally {
      await failing.close();
      await queue.close();
    }
    const view = await h.view(id, 0);
    expect(view).toMatchObject({ status: "failed", error: { code: "stalled", message: "job stalled more than allowable limit" } });
    expect(view.finishedAt).not.toBeNull();
    const stored = await h.app.inject({ method: "GET", url: `/v1/compactions/${id}`, headers: { authorization: "Bearer key-acme" } });
    expect(stored.json()).toEqual(view);
  });
});
