/**
 * The result store against a real Redis: what a worker reads before it runs
 * a job, in one round trip, across queue shards (a job's records sit in its
 * own shard's slot).
 */
import { afterEach, describe, expect, it } from "vitest";
import { jobIdInShard, newJobSeed } from "../../src/queue/compactionJob.js";
import { serviceKeys } from "../../src/queue/queueNames.js";
import { closeRedisConnection, createRedisConnection } from "../../src/queue/redisConnection.js";
import type { Redis } from "ioredis";
import type { ServiceKeys } from "../../src/queue/queueNames.js";
import { ResultStore, type FinalOutcome, type ResultEncoding } from "../../src/queue/resultStore.js";
import { earlierBrotli } from "../helpers/earlierBrotli.js";
import { deleteKeysUnder } from "../helpers/redisTestPrefix.js";
import { serviceConfig } from "../helpers/serviceConfig.js";
import { storedResult } from "../helpers/storedResult.js";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A result store on a fresh prefix, and a second one on the same keys writing the other form (a deployment switching forms). */
function stores(encoding: ResultEncoding = "base64"): { results: ResultStore; other: ResultStore; redis: Redis; keys: ServiceKeys } {
  const config = serviceConfig("result-store");
  const redis = createRedisConnection(config.redisUrl!, "worker", config.queuePrefix);
  cleanups.push(async () => {
    await deleteKeysUnder(config.queuePrefix);
    await closeRedisConnection(redis);
  });
  const keys = serviceKeys(config.queuePrefix);
  return { results: new ResultStore(redis, keys, 60, encoding), other: new ResultStore(redis, keys, 60, encoding === "raw" ? "base64" : "raw"), redis, keys };
}

function store(): ResultStore {
  return stores().results;
}

const failed: FinalOutcome = { status: "failed", finishedAt: 1_700_000_000_000, error: { code: "invalid_conversation", message: "no" } };

describe("what a worker reads before running a job", () => {
  for (const shard of [0, 3]) {
    it(`says nothing is known of a fresh job, then the recorded outcome, then the cancellation (shard ${shard})`, async () => {
      const results = store();
      const jobId = jobIdInShard(newJobSeed(), shard);
      expect(await results.beforeRunning(jobId)).toEqual({ cancelled: false, recorded: undefined });

      await results.settleOnce(jobId, failed);
      expect(await results.beforeRunning(jobId)).toEqual({ cancelled: false, recorded: failed });

      await results.markCancelled(jobId);
      expect(await results.beforeRunning(jobId)).toEqual({ cancelled: true, recorded: failed });
    });
  }
});

describe("the two forms a result is stored in (COMPACTD_RESULT_ENCODING)", () => {
  const completed: FinalOutcome = {
    status: "completed",
    finishedAt: 1_700_000_000_000,
    result: storedResult({
      messages: Array.from({ length: 40 }, (_, i) => ({ role: i % 2 ? "assistant" : "user", content: `message ${i}: ${"the tests pass now; ".repeat(20)}${i * 7919}` })),
    }),
  };

  for (const encoding of ["base64", "raw"] as const) {
    it(`reads what a store writing ${encoding === "raw" ? "base64" : "raw"} wrote, and what it writes itself (${encoding})`, async () => {
      const { results, other } = stores(encoding);
      for (const [writer, reader] of [
        [other, results],
        [results, other],
        [results, results],
      ] as const) {
        const jobId = jobIdInShard(newJobSeed(), 0);
        await writer.settleOnce(jobId, completed);
        expect(await reader.get(jobId)).toEqual(completed);
        expect(JSON.parse((await reader.resultJson(jobId))!)).toEqual(completed.result);
        expect(await reader.beforeRunning(jobId)).toEqual({ cancelled: false, recorded: completed });
      }
    });
  }

  it("reads an outcome that a version before zstd stored in brotli, in either form", async () => {
    const { results, redis, keys } = stores();
    const text = `{"status":"completed","finishedAt":${completed.finishedAt},"result":${JSON.stringify(completed.result)}}`;
    const brotli = earlierBrotli(Buffer.from(text));
    for (const stored of [brotli.toString("base64"), Buffer.concat([Buffer.of(0), brotli])]) {
      const jobId = jobIdInShard(newJobSeed(), 0);
      await redis.set(keys.result(jobId), stored);
      expect(await results.get(jobId)).toEqual(completed);
      expect(JSON.parse((await results.resultJson(jobId))!)).toEqual(completed.result);
    }
  });

  it("stores raw a quarter smaller than base64, behind a byte base64 never starts with", async () => {
    const { results, other, redis, keys } = stores("raw");
    const [rawId, textId] = [jobIdInShard(newJobSeed(), 0), jobIdInShard(newJobSeed(), 0)];
    await results.settleOnce(rawId, completed);
    await other.settleOnce(textId, completed);
    const [raw, text] = [(await redis.getBuffer(keys.result(rawId)))!, (await redis.getBuffer(keys.result(textId)))!];
    expect(raw[0]).toBe(0);
    expect(text.toString("latin1")).toMatch(/^[A-Za-z0-9+/]+=*$/);
    expect(raw.length).toBe(1 + Buffer.from(text.toString("latin1"), "base64").length);
    expect(raw.length / text.length).toBeLessThan(0.76);
  });
});

describe("settling a job's records in one round trip", () => {
  const completed: FinalOutcome = { status: "completed", finishedAt: 1_700_000_000_000, result: storedResult() };

  it("stores the outcome once, deletes the payload and announces the job only once its outcome can be read", async () => {
    const { results, redis, keys } = stores();
    const jobId = jobIdInShard(newJobSeed(), 2);
    const payloadKey = keys.payload(jobId, "submission-1");
    await redis.set(payloadKey, Buffer.from("compressed conversation"));
    expect((await results.beforeRunning(jobId, payloadKey)).payload).toEqual(Buffer.from("compressed conversation"));

    const subscriber = redis.duplicate();
    cleanups.push(() => closeRedisConnection(subscriber));
    const readOnAnnouncement = new Promise<FinalOutcome | undefined>((resolve) => {
      subscriber.on("message", (channel: string, id: string) => {
        if (channel === keys.settledChannel && id === jobId) void results.get(jobId).then(resolve);
      });
    });
    await subscriber.subscribe(keys.settledChannel);

    const stored = await results.settleOnce(jobId, completed, payloadKey);
    expect(stored).toEqual({ recorded: completed, resultJson: JSON.stringify(completed.result) });
    expect(await readOnAnnouncement).toEqual(completed);
    expect(await redis.exists(payloadKey)).toBe(0);
    expect((await results.beforeRunning(jobId, payloadKey)).payload).toBeNull();
    // A second settling (a takeover) finds the first outcome, and is handed no result text to send.
    expect(await results.settleOnce(jobId, failed)).toEqual({ recorded: completed });
  });

  it("drops a completed outcome for a job cancelled before it is stored, but records a failure", async () => {
    const { results } = stores();
    const [cancelled, cancelledAndFailed] = [jobIdInShard(newJobSeed(), 0), jobIdInShard(newJobSeed(), 1)];
    await results.markCancelled(cancelled);
    expect(await results.settleOnce(cancelled, completed)).toBe("cancelled");
    expect(await results.get(cancelled)).toBeUndefined();

    await results.markCancelled(cancelledAndFailed);
    expect(await results.settleOnce(cancelledAndFailed, failed)).toEqual({ recorded: failed });
  });
});

