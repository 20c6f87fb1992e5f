/**
 * Batches: many compactions submitted together, one callback when all are done.
 *
 * The record lists every item (some never became jobs: nothing to compact, or
 * their conversation already had a compaction in flight). Finished jobs are
 * collected with their final status in a hash; whoever adds the last one
 * learns the batch is complete, and the `batch.completed` callback reports the
 * statuses from that hash (BullMQ has not recorded the last job's end yet when
 * its worker settles it).
 * That check runs again whenever a job is settled again (a worker that took
 * over a crashed one), so the `batch.completed` callback is queued at least
 * once; its stable webhook id makes the repeats one delivery.
 */
import type { RedisClient } from "./redisConnection.js";
import type { ServiceKeys } from "./queueNames.js";
import type { FinalStatus } from "./resultStore.js";

export type BatchItem =
  | { readonly status: "queued"; readonly id: string }
  /**
   * `stillAboveThreshold`: the item's context is above the threshold all the
   * same (see Intake); absent from batches stored by a version before it.
   */
  | { readonly status: "nothing_to_compact"; readonly stillAboveThreshold?: boolean }
  /** The item's conversation already had this compaction in flight; it was not queued again. */
  | { readonly status: "in_flight"; readonly inFlightId: string };

export interface BatchRecord {
  readonly id: string;
  readonly tenant: string;
  readonly createdAt: number;
  /** Digest of the request when it carried an Idempotency-Key (a replay must match it), else empty. */
  readonly requestDigest: string;
  readonly callbackUrl?: string;
  readonly metadata?: unknown;
  readonly items: readonly BatchItem[];
}

/**
 * Stores the record unless the batch exists (0); otherwise answers whether its
 * jobs have all finished already (2) or not (1). Jobs are queued before the
 * record is written, so the fastest can finish first.
 */
const CREATE = `
if redis.call("HSETNX", KEYS[1], "record", ARGV[1]) == 0 then return 0 end
redis.call("HSET", KEYS[1], "jobs", ARGV[2])
redis.call("EXPIRE", KEYS[1], ARGV[3])
if redis.call("HLEN", KEYS[2]) >= tonumber(ARGV[2]) then return 2 end
return 1
`;

/**
 * Claims an idempotent batch's key for one request (its tenant and digest in
 * ARGV[1]) unless another request holds it: 1 when this request holds it now
 * (or already did), 0 when a different request does. The compare and the
 * claim are one step, so of two different requests racing for a key exactly
 * one goes on to queue its items.
 */
const CLAIM = `
local held = redis.call("HGET", KEYS[1], "claim")
if held == false then
  redis.call("HSET", KEYS[1], "claim", ARGV[1])
  redis.call("EXPIRE", KEYS[1], ARGV[2])
  return 1
end
if held == ARGV[1] then return 1 end
return 0
`;

/**
 * Gives up this request's claim (ARGV[1]) while no record is stored: the
 * claim was taken, but the key's item jobs turned out to be another
 * request's. Only an API from before the claim leaves such jobs behind (a
 * rolling upgrade: it queues items, then stores the record, never claiming),
 * and a claim kept here would refuse that request's own retry.
 */
const RELEASE = `
if redis.call("HGET", KEYS[1], "claim") == ARGV[1] and redis.call("HEXISTS", KEYS[1], "record") == 0 then
  redis.call("HDEL", KEYS[1], "claim")
end
return 1
`;

/** Adds a finished job and answers whether every job of the batch has finished. */
const MARK_FINISHED = `
redis.call("HSET", KEYS[2], ARGV[1], ARGV[2])
redis.call("EXPIRE", KEYS[2], ARGV[3])
local jobs = tonumber(redis.call("HGET", KEYS[1], "jobs"))
if jobs == nil then return 0 end
if redis.call("HLEN", KEYS[2]) >= jobs then return 1 end
return 0
`;

export class BatchStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: ServiceKeys,
    private readonly retentionSeconds: number,
  ) {}

  /**
   * Stores a new batch, once its jobs are queued. `exists` (nothing stored)
   * is the replay of an idempotent batch request; `complete` means every job
   * finished before the record was written (or there were none), so nobody
   * else will see the batch complete.
   */
  async create(record: BatchRecord): Promise<"created" | "complete" | "exists"> {
    const jobs = record.items.filter((item) => item.status === "queued").length;
    const outcome = await this.redis.eval(
      CREATE,
      2,
      this.keys.batch(record.id),
      this.keys.batchFinished(record.id),
      JSON.stringify(record),
      jobs,
      this.retentionSeconds,
    );
    return outcome === 0 ? "exists" : outcome === 2 ? "complete" : "created";
  }

  /**
   * Claims the batch id an Idempotency-Key stands for, before any of its items
   * is queued: false when a different request (another tenant's, or another
   * body) claimed it first. The same request claiming again (a retry racing
   * the original) is let through; its items are then replays of the same jobs.
   */
  async claim(batchId: string, tenant: string, requestDigest: string): Promise<boolean> {
    const held = await this.redis.eval(CLAIM, 1, this.keys.batch(batchId), `${tenant}\n${requestDigest}`, this.retentionSeconds);
    return held === 1;
  }

  /** Undoes {@link claim} for a request that found the key's items held by another (see RELEASE). */
  async release(batchId: string, tenant: string, requestDigest: string): Promise<void> {
    await this.redis.eval(RELEASE, 1, this.keys.batch(batchId), `${tenant}\n${requestDigest}`);
  }

  async get(batchId: string): Promise<BatchRecord | undefined> {
    const json = await this.redis.hget(this.keys.batch(batchId), "record");
    return json === null ? undefined : (JSON.parse(json) as BatchRecord);
  }

  /** Records how `jobId` ended; true when the batch has no job left to finish. */
  async markFinished(batchId: string, jobId: string, status: FinalStatus): Promise<boolean> {
    const done = await this.redis.eval(
      MARK_FINISHED,
      2,
      this.keys.batch(batchId),
      this.keys.batchFinished(batchId),
      jobId,
      status,
      this.retentionSeconds,
    );
    return done === 1;
  }

  /** Final status of each finished job of the batch. */
  async finished(batchId: string): Promise<ReadonlyMap<string, FinalStatus>> {
    const statuses = await this.redis.hgetall(this.keys.batchFinished(batchId));
    return new Map(Object.entries(statuses) as [string, FinalStatus][]);
  }
}
