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

      await results.saveOnce(jobId, failed);
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
        await writer.saveOnce(jobId, completed);
        expect(await reader.get(jobId)).toEqual(completed);
        expect(JSON.parse((await reader.resultJson(jobId))!)).toEqual(completed.result);
        expect(await reader.beforeRunning(jobId)).toEqual({ cancelled: false, recorded: completed });
      }
    });
  }

  it("stores raw a quarter smaller than base64, behind a byte base64 never starts with", async () => {
    const { results, other, redis, keys } = stores("raw");
    const [rawId, textId] = [jobIdInShard(newJobSeed(), 0), jobIdInShard(newJobSeed(), 0)];
    await results.saveOnce(rawId, completed);
    await other.saveOnce(textId, completed);
    const [raw, text] = [(await redis.getBuffer(keys.result(rawId)))!, (await redis.getBuffer(keys.result(textId)))!];
    expect(raw[0]).toBe(0);
    expect(text.toString("latin1")).toMatch(/^[A-Za-z0-9+/]+=*$/);
    expect(raw.length).toBe(1 + Buffer.from(text.toString("latin1"), "base64").length);
    expect(raw.length / text.length).toBeLessThan(0.76);
  });
});
