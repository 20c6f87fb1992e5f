/**
 * What a compaction job carries and how jobs are named and ordered.
 */
import { createHash, randomBytes } from "node:crypto";
import type { Reason } from "../core/compactor.js";
import type { FormatOption } from "../core/formats/parseConversation.js";
import type { Replaces } from "../core/replaces.js";
import type { BudgetOverrides } from "../core/settings.js";
import type { KnownTokenCounts } from "../core/tokenEstimator.js";

/**
 * The part of the request that is large: stored compressed, apart from the
 * job (see payloadStore.ts). The stored JSON is a single compaction's whole
 * request body as it was received (these are its fields, and the others go
 * unread), or, for a batch item, these fields written out.
 */
export interface ConversationPayload {
  readonly messages: unknown[];
  readonly system?: unknown;
  readonly format?: FormatOption;
}

export interface CompactionJobData {
  readonly tenant: string;
  /**
   * {@link ConversationPayload}, brotli-compressed and base64-encoded, in the
   * job data itself: how jobs were queued before the payload got a key of its
   * own (payloadStore.ts). Absent on newer jobs, whose payload is found from
   * the job id and {@link submissionId}; still read, so jobs queued by an
   * earlier version are processed after an upgrade.
   */
  readonly payload?: string;
  readonly contextWindow: number;
  readonly settings: BudgetOverrides;
  readonly reason: Reason;
  readonly conversationId?: string;
  readonly callbackUrl?: string;
  readonly model?: string;
  readonly instructions?: string;
  readonly usageTokens?: number;
  /** The caller's value, echoed in the job view and the callback. */
  readonly metadata?: unknown;
  readonly batchId?: string;
  /**
   * Random per submission. BullMQ answers an add with an existing job id by
   * returning the id, not by saying whether it created anything; comparing the
   * stored job's submission with ours tells a new job from an idempotent replay.
   * It also names the job's payload key: unique per submission, so a replay
   * never touches the payload of the job it replays.
   */
  readonly submissionId: string;
  /** SHA-256 of the request, so one idempotency key reused for another request is refused. */
  readonly requestDigest: string;
  /**
   * The exact token counts the API made deciding to enqueue, so the worker
   * does not tokenize the same messages again. Absent on jobs queued before
   * they were recorded.
   */
  readonly tokenCounts?: KnownTokenCounts;
  /**
   * The exact-swap contract of the result, computed by the API from the
   * request it received: hashing 100 KB of canonical JSON is work a worker's
   * event loop, busy with hundreds of streams, should not do.
   */
  readonly replaces: Replaces;
}

/** A job to queue: its data, and its conversation's JSON compressed (encodePayload), stored beside it. */
export interface CompactionSubmission {
  readonly data: CompactionJobData;
  readonly payload: Uint8Array;
}

/** BullMQ job name; one kind of job per queue, the name is for dashboards. */
export const COMPACTION_JOB_NAME = "compact";

/**
 * BullMQ priorities (lower runs first). An overflow compaction has an agent
 * blocked on it, a threshold one is housekeeping the agent can run without.
 * Every reason gets an explicit priority: BullMQ runs unprioritized jobs before
 * all prioritized ones, which would put housekeeping ahead of a blocked agent.
 */
export const PRIORITY_BY_REASON: Readonly<Record<Reason, number>> = {
  overflow: 1,
  manual: 2,
  threshold: 3,
};

const JOB_ID_PREFIX = "cmp_";
const BATCH_ID_PREFIX = "bat_";

/**
 * Hex digits of the check an id ends with (before a job id's shard). An id the
 * service no longer finds was either issued and then lost (its result expired,
 * or Redis lost its data) or never issued at all; only the id itself can tell
 * which once Redis has forgotten everything, so every id carries a check of
 * its own digits. It is a checksum, not a signature: it tells a mistyped or
 * made-up id from an issued one (one chance in four billion of passing), and
 * forging one gains nothing but a 410 for a job that does not exist.
 */
const CHECK_HEX = 8;

function idCheck(digits: string): string {
  return digest(`id check\n${digits}`).slice(0, CHECK_HEX);
}

/**
 * A job id is `cmp_`, 22 hex digits of its seed, an 8-digit check of the
 * seed and shard, and its queue shard as two more, so any process finds a
 * job's shard from its id alone, whatever the configured shard count is now
 * (a deployment that adds shards still finds its old jobs).
 */
export function jobIdInShard(seed: string, shard: number): string {
  const seedDigits = seed.slice(0, 32 - CHECK_HEX - 2);
  const shardDigits = shard.toString(16).padStart(2, "0");
  return JOB_ID_PREFIX + seedDigits + idCheck(seedDigits + shardDigits) + shardDigits;
}

/**
 * Whether `id` is one this service issued (its check holds), so that not
 * finding it means "gone" rather than "never existed". Ids issued before
 * ids carried a check fail it and are reported as never existed.
 */
export function isIssuedId(id: string): boolean {
  if (isJobId(id)) {
    const digits = id.slice(JOB_ID_PREFIX.length);
    const seedDigits = digits.slice(0, -CHECK_HEX - 2);
    const shardDigits = digits.slice(-2);
    return digits.slice(-CHECK_HEX - 2, -2) === idCheck(seedDigits + shardDigits);
  }
  if (isBatchId(id)) {
    const digits = id.slice(BATCH_ID_PREFIX.length);
    return digits.slice(-CHECK_HEX) === idCheck(digits.slice(0, -CHECK_HEX));
  }
  return false;
}

/** The queue shard a job id names; 0 for anything that is not a job id. */
export function shardOfJobId(jobId: string): number {
  return isJobId(jobId) ? Number.parseInt(jobId.slice(-2), 16) : 0;
}

/**
 * The shard a job goes to. A conversation's jobs always share one, so the
 * one-in-flight rule (a deduplication key in that shard's queue) holds across
 * shards; other jobs spread by `spread` (their id's randomness).
 */
export function shardFor(tenant: string, conversationId: string | undefined, spread: string, shards: number): number {
  const basis = conversationId === undefined ? spread : inFlightId(tenant, conversationId);
  return Number.parseInt(digest(`shard\n${basis}`).slice(0, 8), 16) % shards;
}

/** Random hex for a new job's id, placed in a shard by {@link jobIdInShard}. */
export function newJobSeed(): string {
  return randomBytes(15).toString("hex");
}

/**
 * The seed an idempotency key stands for. Deriving the job id from it
 * (instead of mapping key → id in a separate record) makes "same key, same
 * job" a property of BullMQ's own atomic add: a second add with the same id
 * creates nothing.
 */
export function idempotentJobSeed(tenant: string, idempotencyKey: string): string {
  return digest(`job\n${tenant}\n${idempotencyKey}`);
}

/** The seed of item `index` of a batch, stable across replays of the batch. */
export function batchItemJobSeed(batchId: string, index: number): string {
  return digest(`item\n${batchId}\n${index}`);
}

/** A fresh job id in `shard`. Ids are unguessable, though tenancy does not rest on that. */
export function newJobId(shard = 0): string {
  return jobIdInShard(newJobSeed(), shard);
}

/** A batch id is `bat_`, 24 hex digits and their 8-digit check. */
function batchIdOf(digits: string): string {
  const body = digits.slice(0, 32 - CHECK_HEX);
  return BATCH_ID_PREFIX + body + idCheck(body);
}

export function newBatchId(): string {
  return batchIdOf(randomBytes(16).toString("hex"));
}

export function idempotentBatchId(tenant: string, idempotencyKey: string): string {
  return batchIdOf(digest(`batch\n${tenant}\n${idempotencyKey}`));
}

/**
 * BullMQ deduplication id of the one-in-flight rule. Hashed because a
 * conversation id is caller text and ends up inside a Redis key.
 */
export function inFlightId(tenant: string, conversationId: string): string {
  return digest(`inflight\n${tenant}\n${conversationId}`);
}

/**
 * Whether a job read from BullMQ still holds the data the API queued. A Redis
 * that lost the job's own hash (an evicting `maxmemory-policy`, a failover
 * that lost writes) while its id stayed in a queue's list hands workers and
 * readers a job whose data is empty: nothing to run, no tenant to show it to,
 * no callback to tell. Such a job is treated as gone.
 */
export function holdsJobData(data: Partial<CompactionJobData> | undefined): data is CompactionJobData {
  return typeof data?.tenant === "string";
}

export function isJobId(value: string): boolean {
  return /^cmp_[0-9a-f]{32}$/.test(value);
}

export function isBatchId(value: string): boolean {
  return /^bat_[0-9a-f]{32}$/.test(value);
}

function digest(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex").slice(0, 32);
}
