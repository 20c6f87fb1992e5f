/**
 * A queued job's payload in a key of its own: raw bytes, in the job's shard,
 * named by the submission so a replay never touches the job it replays, and
 * not left behind by an add that created nothing.
 */
import type { Redis } from "ioredis";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { idempotentJobSeed, jobIdInShard, newJobId, type CompactionJobData, type CompactionSubmission } from "../../src/queue/compactionJob.js";
import type { CompactionQueue } from "../../src/queue/compactionQueue.js";
import { decodePayload, encodePayload } from "../../src/queue/payloadCodec.js";
import { PayloadStore, submitWithPayload } from "../../src/queue/payloadStore.js";
import { serviceKeys, type ServiceKeys } from "../../src/queue/queueNames.js";
import { openTestQueue, type TestQueue } from "../helpers/testQueue.js";
import { testJobData } from "../helpers/jobData.js";

let testQueue: TestQueue;
let redis: Redis;
let queue: CompactionQueue;
let keys: ServiceKeys;
let payloads: PayloadStore;

beforeEach(async () => {
  testQueue = await openTestQueue("payloads");
  ({ redis, queue } = testQueue);
  keys = serviceKeys(testQueue.prefix);
  payloads = new PayloadStore(redis, keys);
});

afterEach(() => testQueue.close());

async function submission(messages: unknown[], overrides: Partial<CompactionJobData> = {}): Promise<CompactionSubmission> {
  return {
    data: testJobData({ requestDigest: "digest-a", ...overrides }),
    payload: encodePayload(Buffer.from(JSON.stringify({ messages }), "utf8")),
  };
}

/** Every payload key of the test's prefix. */
async function payloadKeys(): Promise<string[]> {
  return redis.keys(`${testQueue.prefix}:store:payload:*`);
}

describe("a submitted job's payload", () => {
  it("is stored as the compressed bytes themselves under its submission's key, with an expiry, and not in the job data", async () => {
    const id = newJobId();
    const submitted = await submission([{ role: "user", content: "hello" }]);
    expect((await submitWithPayload(queue, payloads, id, submitted, false)).kind).toBe("created");

    const job = await queue.getJob(id);
    expect(job!.data).not.toHaveProperty("payload");
    const key = keys.payload(id, submitted.data.submissionId);
    expect(key.startsWith(`${testQueue.prefix}:`)).toBe(true);
    const stored = await redis.getBuffer(key);
    expect(stored).toEqual(Buffer.from(submitted.payload));
    expect(decodePayload(stored!)).toEqual({ messages: [{ role: "user", content: "hello" }] });
    const ttl = await redis.ttl(key);
    expect(ttl).toBeGreaterThan(7 * 24 * 3600);
    expect(await payloads.read(id, job!.data)).toEqual(stored);
  });

  it("is not overwritten by a replay of the job's Idempotency-Key with another body, whose own payload is deleted", async () => {
    const id = jobIdInShard(idempotentJobSeed("acme", "replayed-key"), 0);
    const first = await submission([{ role: "user", content: "the real one" }]);
    const replay = await submission([{ role: "user", content: "a different body" }]);
    const reused = await submission([{ role: "user", content: "another request" }], { requestDigest: "digest-b" });
    expect((await submitWithPayload(queue, payloads, id, first, true)).kind).toBe("created");

    expect((await submitWithPayload(queue, payloads, id, replay, true)).kind).toBe("replayed");
    expect((await submitWithPayload(queue, payloads, id, reused, true)).kind).toBe("keyReused");

    const job = await queue.getJob(id);
    expect(decodePayload((await payloads.read(id, job!.data))!)).toEqual({ messages: [{ role: "user", content: "the real one" }] });
    expect(await payloadKeys()).toEqual([keys.payload(id, first.data.submissionId)]);
  });

  it("is deleted when its conversation already has a compaction in flight", async () => {
    const first = await submission([{ role: "user", content: "first" }], { conversationId: "conv-1" });
    const second = await submission([{ role: "user", content: "second" }], { conversationId: "conv-1" });
    const firstId = newJobId();
    await submitWithPayload(queue, payloads, firstId, first, false);

    expect((await submitWithPayload(queue, payloads, newJobId(), second, false)).kind).toBe("inFlight");

    expect(await payloadKeys()).toEqual([keys.payload(firstId, first.data.submissionId)]);
  });

  it("is deleted when the add fails without storing the job", async () => {
    const submitted = await submission([{ role: "user", content: "refused" }]);
    // BullMQ refuses an integer-like custom id before sending anything.
    await expect(submitWithPayload(queue, payloads, "12345", submitted, false)).rejects.toThrow();
    expect(await payloadKeys()).toEqual([]);
  });
});
