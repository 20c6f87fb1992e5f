/**
 * Two different batch requests with one Idempotency-Key, sent at the same
 * time over real HTTP to one API: both can pass the first look-up before
 * either has stored its batch. Whichever claims the key first owns it; the
 * other must get the 422 a later reuse gets, and none of its items may be
 * queued (the item job ids come from the key, so they would mix into the
 * winner's batch).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Queue } from "bullmq";
import { runApi, type RunningApi } from "../../src/api/runApi.js";
import type { CompactionJobData } from "../../src/queue/compactionJob.js";
import { COMPACTION_QUEUE, serviceKeys } from "../../src/queue/queueNames.js";
import { Redis } from "ioredis";
import { conversation, reactTurn } from "../helpers/conversations.js";
import { deleteKeysUnder } from "../helpers/redisTestPrefix.js";
import { bearer, serviceConfig } from "../helpers/serviceConfig.js";

const config = serviceConfig("batch-key-race");
let api: RunningApi;
beforeAll(async () => {
  api = await runApi(config, { logger: false }, "127.0.0.1");
});
afterAll(async () => {
  await api.close();
  await deleteKeysUnder(config.queuePrefix);
});

/** A conversation long enough to compact under a 4000-token keep-recent budget. */
function item(conversationId: string): Record<string, unknown> {
  const messages = conversation(...Array.from({ length: 5 }, () => reactTurn({ rounds: 3, toolResultChars: 2_000 })));
  return { messages, contextWindow: 20_000, settings: { reserveTokens: 4_000 }, conversationId };
}

async function postBatch(key: string, body: unknown): Promise<{ status: number; replayed: string | null; body: any }> {
  const response = await fetch(`http://127.0.0.1:${api.port}/v1/compactions/batch`, {
    method: "POST",
    headers: { ...bearer("acme"), "idempotency-key": key, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: response.status, replayed: response.headers.get("idempotent-replayed"), body: await response.json() };
}

describe("different batch requests racing for one Idempotency-Key", () => {
  it("answers the loser 422 and queues none of its items", async () => {
    const queue = new Queue<CompactionJobData>(COMPACTION_QUEUE, { connection: { url: config.redisUrl }, prefix: config.queuePrefix });
    try {
      for (let attempt = 0; attempt < 8; attempt++) {
        const key = `race-${attempt}`;
        const bodies = ["a", "b"].map((side) => ({ items: [item(`${key}-${side}-1`), item(`${key}-${side}-2`)] }));
        const answers = await Promise.all(bodies.map((body) => postBatch(key, body)));
        const statuses = answers.map((answer) => answer.status).sort();
        expect(statuses, `attempt ${attempt}: ${JSON.stringify(answers.map((answer) => answer.body))}`).toEqual([202, 422]);
        const loser = answers.find((answer) => answer.status === 422)!;
        expect(loser.body.error).toMatchObject({ code: "idempotency_key_reused", field: "Idempotency-Key" });
        const winnerIndex = answers.findIndex((answer) => answer.status === 202);
        const winner = answers[winnerIndex]!;
        expect(winner.replayed).toBeNull();
        // Every item of the batch is a job queued for the winner's own conversation.
        const expected = bodies[winnerIndex]!.items.map((entry) => entry.conversationId);
        const ids = (winner.body.items as { id: string; status: string }[]).map((entry) => entry.id);
        const jobs = await Promise.all(ids.map((id) => queue.getJob(id)));
        expect(jobs.map((job) => job?.data.conversationId)).toEqual(expected);
      }
      // Nothing of the losers was queued beside the winners' items.
      expect(await queue.getJobCountByTypes("waiting", "prioritized", "delayed", "active")).toBe(16);
    } finally {
      await queue.close();
    }
  });
});

/**
 * A batch stored by an API from before the claim (a rolling upgrade): its
 * hash holds the record and its job count, no `claim`. Written here as that
 * API left it: the batch stored by this one, its claim taken away.
 */
describe("a batch stored by an API from before the key claim", () => {
  it("is replayed for the same body and refused 422 for another, by its stored digest", async () => {
    const redis = new Redis(config.redisUrl);
    try {
      const body = { items: [item("old-1"), item("old-2")] };
      const first = await postBatch("from-old-api", body);
      expect(first.status).toBe(202);
      const key = serviceKeys(config.queuePrefix).batch(first.body.id);
      expect(await redis.hdel(key, "claim")).toBe(1);

      const replay = await postBatch("from-old-api", body);
      expect(replay.status, JSON.stringify(replay.body)).toBe(202);
      expect(replay.replayed).toBe("true");
      expect(replay.body).toEqual(first.body);
      const other = await postBatch("from-old-api", { items: [item("other-1")] });
      expect(other.status, JSON.stringify(other.body)).toBe(422);
      expect(other.body.error).toMatchObject({ code: "idempotency_key_reused", field: "Idempotency-Key" });
    } finally {
      redis.disconnect();
    }
  });

  it("whose items an old API had queued but not yet recorded: the same body queues nothing new, another gets 422", async () => {
    const redis = new Redis(config.redisUrl);
    const queue = new Queue<CompactionJobData>(COMPACTION_QUEUE, { connection: { url: config.redisUrl }, prefix: config.queuePrefix });
    try {
      const body = { items: [item("mid-1"), item("mid-2")] };
      const first = await postBatch("old-api-mid-request", body);
      expect(first.status).toBe(202);
      // The old API's request between queueing its items and storing its record: jobs, no record, no claim.
      await redis.del(serviceKeys(config.queuePrefix).batch(first.body.id));
      const queued = await queue.getJobCountByTypes("waiting", "prioritized", "delayed", "active");

      const other = await postBatch("old-api-mid-request", { items: [item("mid-other-1"), item("mid-other-2")] });
      expect(other.status, JSON.stringify(other.body)).toBe(422);
      const retry = await postBatch("old-api-mid-request", body);
      expect(retry.status, JSON.stringify(retry.body)).toBe(202);
      expect(retry.body.items).toEqual(first.body.items);
      expect(await queue.getJobCountByTypes("waiting", "prioritized", "delayed", "active")).toBe(queued);
    } finally {
      await queue.close();
      redis.disconnect();
    }
  });
});
