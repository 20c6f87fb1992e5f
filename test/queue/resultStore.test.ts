/**
 * The result store against a real Redis: what a worker reads before it runs
 * a job, in one round trip, across queue shards (a job's records sit in its
 * own shard's slot).
 */
import { afterEach, describe, expect, it } from "vitest";
import { jobIdInShard, newJobSeed } from "../../src/queue/compactionJob.js";
import { serviceKeys } from "../../src/queue/queueNames.js";
import { closeRedisConnection, createRedisConnection } from "../../src/queue/redisConnection.js";
import { ResultStore, type FinalOutcome } from "../../src/queue/resultStore.js";
import { deleteKeysUnder } from "../helpers/redisTestPrefix.js";
import { serviceConfig } from "../helpers/serviceConfig.js";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function store(): ResultStore {
  const config = serviceConfig("result-store");
  const redis = createRedisConnection(config.redisUrl!, "worker", config.queuePrefix);
  cleanups.push(async () => {
    await deleteKeysUnder(config.queuePrefix);
    await closeRedisConnection(redis);
  });
  return new ResultStore(redis, serviceKeys(config.queuePrefix), 60);
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
