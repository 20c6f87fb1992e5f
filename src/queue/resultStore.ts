/**
 * The service's own records beside BullMQ's: how each job ended (its result
 * or its error), cancellation flags, and the tombstones of cancelled queued
 * jobs.
 *
 * A job's outcome is stored under its id before BullMQ marks it finished and
 * before its callback is queued, and only the first store wins. So if a worker
 * dies after summarizing but before BullMQ records the completion, the worker
 * that takes the job over delivers the stored outcome instead of summarizing a
 * second time: the callback, the job view and the metrics all see one result.
 */
import type { RedisClient } from "./redisConnection.js";
import type { Reason, Result } from "../core/compactor.js";
import type { Replaces } from "../core/replaces.js";
import { decodePayload, encodeJson, encodeJsonText, inflatePayload, type Packed } from "./payloadCodec.js";
import type { ServiceKeys } from "./queueNames.js";

/**
 * How outcomes are written (COMPACTD_RESULT_ENCODING): as base64 text, which
 * every version reads, or as their raw compressed bytes behind a marker byte,
 * a quarter smaller, which versions from this one on read. Results are what
 * sizes Redis at high rates (a day of them is kept by default), so raw is
 * worth having; it is not the default yet because a process of an earlier
 * version could not read a raw result during a rolling upgrade. Both forms
 * are read here, whichever is configured.
 */
export type ResultEncoding = "base64" | "raw";

export const RESULT_ENCODINGS: readonly ResultEncoding[] = ["base64", "raw"];

/** First byte of a raw outcome: never the first byte of base64 text. */
const RAW_MARK = 0x00;

/**
 * Result fields added after results were first stored. A result an earlier
 * version wrote lacks them (one kept from before an upgrade, or written by a
 * worker not yet upgraded during a rolling deploy), and results are read as
 * stored, not rebuilt: so whatever reads one takes these as possibly absent,
 * and the API's contract lists them as optional. A field added to Result
 * later belongs here.
 */
export const RESULT_FIELDS_ADDED_LATER = ["previousSummaryCharsCut", "stillAboveThreshold"] as const satisfies readonly (keyof Result)[];

type AddedLater = (typeof RESULT_FIELDS_ADDED_LATER)[number];

/** A job's result: the core's Result as the CLI prints it, plus the swap contract; {@link RESULT_FIELDS_ADDED_LATER} may be absent. */
export type StoredResult = Omit<Result, AddedLater> & Partial<Pick<Result, AddedLater>> & { readonly replaces: Replaces };

/** Why a job failed, in the API's error shape. */
export interface JobError {
  readonly code: string;
  readonly message: string;
  /** The request field at fault, for bad input found by the worker. */
  readonly field?: string;
}

export type FinalOutcome =
  | { readonly status: "completed"; readonly finishedAt: number; readonly result: StoredResult }
  | { readonly status: "failed" | "cancelled"; readonly finishedAt: number; readonly error: JobError };

export type FinalStatus = FinalOutcome["status"];

/** What the job view needs of a queued job that was cancelled and removed from the queue. */
export interface Tombstone {
  readonly tenant: string;
  readonly reason: Reason;
  readonly conversationId?: string;
  readonly metadata?: unknown;
  readonly batchId?: string;
  readonly attempts: number;
  readonly createdAt: number;
  /**
   * When a worker last started it (epoch ms), for a job cancelled while it
   * waited out a retry backoff; absent for one no worker ever took.
   */
  readonly startedAt?: number;
  /** The job's request digest, so its Idempotency-Key stays bound to its request after the job is gone. */
  readonly requestDigest?: string;
}

/**
 * An outcome's stored text, written field by field so that a completed one
 * always ends with its result: `{"status":"completed","finishedAt":…,"result":…}`
 * (the order JSON.stringify gives the outcomes workers build, so results
 * stored before this was spelled out read the same). A completed outcome's
 * text comes with its result's, which it ends with.
 */
function outcomeJson(outcome: FinalOutcome): { readonly text: string; readonly resultJson?: string } {
  if (outcome.status !== "completed") return { text: JSON.stringify(outcome) };
  const resultJson = JSON.stringify(outcome.result);
  return { text: `{"status":"completed","finishedAt":${JSON.stringify(outcome.finishedAt)},"result":${resultJson}}`, resultJson };
}

/** The text before a completed outcome's result (see {@link outcomeJson}). */
const COMPLETED_HEAD = /^\{"status":"completed","finishedAt":-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?,"result":/;

export class ResultStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: ServiceKeys,
    private readonly retentionSeconds: number,
    private readonly encoding: ResultEncoding = "base64",
  ) {}

  /**
   * Settles job `jobId`'s records in one round trip (one script, on the
   * job's slot): stores `outcome` unless the job already has one, deletes
   * `payloadKey` (the queued conversation, when the job has one in a key:
   * no attempt is left to read it) and announces the settlement to waiting
   * API requests (settledChannel.ts), after the store, so a waiter that
   * reads the job on hearing it sees the outcome. A completed outcome
   * yields to a cancellation flagged before it is stored: then nothing is
   * stored or deleted, and the answer is "cancelled", for the caller to
   * settle the job as cancelled. Otherwise it returns whichever outcome is
   * stored (`recorded`) and, when that is `outcome` and completed, its
   * result's JSON text as stored.
   *
   * This is the one compressed copy of a result: the job view and a queued
   * `compaction.completed` callback read it from here, and the first delivery
   * sends the text returned. One script rather than a command a step,
   * because each command a job sends costs the worker tens of microseconds
   * of CPU on a loaded loop (docs/BENCHMARKS.md, Service): the check for a
   * cancellation, the store, the delete and the announcement took four.
   */
  async settleOnce(jobId: string, outcome: FinalOutcome, payloadKey?: string): Promise<{ readonly recorded: FinalOutcome; readonly resultJson?: string } | "cancelled"> {
    const { text, resultJson } = outcomeJson(outcome);
    const keys = [this.keys.result(jobId), this.keys.cancelled(jobId), ...(payloadKey === undefined ? [] : [payloadKey])];
    const [stored, existing] = await settleScript(this.redis)(
      keys.length,
      ...keys,
      storedForm(text, this.encoding),
      this.retentionSeconds,
      this.keys.settledChannel,
      jobId,
      outcome.status === "completed" ? 1 : 0,
    );
    if (stored === SETTLE_YIELDED) return "cancelled";
    if (stored === SETTLE_STORED) return resultJson === undefined ? { recorded: outcome } : { recorded: outcome, resultJson };
    return { recorded: outcomeOf(existing) ?? outcome };
  }

  /**
   * A completed job's result as the JSON text stored (inflated, never
   * parsed): what a callback splices into its body and signs as it is.
   * Undefined when the job has no stored result (expired, or not completed).
   */
  async resultJson(jobId: string): Promise<string | undefined> {
    const stored = await this.redis.getBuffer(this.keys.result(jobId));
    if (stored === null) return undefined;
    const text = inflatePayload(packedOf(stored)).toString("utf8");
    const head = COMPLETED_HEAD.exec(text);
    return head === null ? undefined : text.slice(head[0].length, -1);
  }

  async get(jobId: string): Promise<FinalOutcome | undefined> {
    return outcomeOf(await this.redis.getBuffer(this.keys.result(jobId)));
  }

  /** Flags the job cancelled; a worker that picks it up or finishes it afterwards sees the flag. */
  async markCancelled(jobId: string): Promise<void> {
    await this.redis.set(this.keys.cancelled(jobId), "1", "EX", this.retentionSeconds);
  }

  /**
   * What a worker must know before it runs a job, in one round trip: whether
   * it was cancelled, the outcome a worker that died after settling it
   * recorded, and, when `payloadKey` names the job's queued conversation,
   * its bytes (null when Redis no longer holds them). The keys share the
   * job's slot, so one MGET reads them all.
   */
  async beforeRunning(
    jobId: string,
    payloadKey?: string,
  ): Promise<{ readonly cancelled: boolean; readonly recorded: FinalOutcome | undefined; readonly payload?: Buffer | null }> {
    const keys = [this.keys.cancelled(jobId), this.keys.result(jobId), ...(payloadKey === undefined ? [] : [payloadKey])];
    const [cancelled, stored, payload] = await this.redis.mgetBuffer(...keys);
    const known = { cancelled: cancelled !== null, recorded: outcomeOf(stored) };
    return payloadKey === undefined ? known : { ...known, payload: payload ?? null };
  }

  async saveTombstone(jobId: string, tombstone: Tombstone): Promise<void> {
    await this.redis.set(this.keys.tombstone(jobId), JSON.stringify(tombstone), "EX", this.retentionSeconds);
  }

  async getTombstone(jobId: string): Promise<Tombstone | undefined> {
    const json = await this.redis.get(this.keys.tombstone(jobId));
    return json === null ? undefined : (JSON.parse(json) as Tombstone);
  }
}

/** What the settling script answers first: the outcome was stored, another was stored before, or it yielded to a cancellation. */
const SETTLE_STORED = 1;
const SETTLE_FOUND = 2;
const SETTLE_YIELDED = 0;

/**
 * KEYS: the result, the cancellation flag and, when the job has one in a
 * key, its payload; ARGV: the stored outcome, its time to live, the settled
 * channel, the job id, 1 when the outcome yields to a cancellation. Answers
 * {stored} or {previously stored, its value} or {yielded}.
 */
const SETTLE_LUA = `
local existing = redis.call('GET', KEYS[1])
if not existing then
  if ARGV[5] == '1' and redis.call('EXISTS', KEYS[2]) == 1 then return {${SETTLE_YIELDED}} end
  redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
end
if KEYS[3] then redis.call('UNLINK', KEYS[3]) end
redis.call('PUBLISH', ARGV[3], ARGV[4])
if existing then return {${SETTLE_FOUND}, existing} end
return {${SETTLE_STORED}}
`;

/** Called with the number of keys first, then the keys, then ARGV (the script's key count varies). */
type SettleScript = (numberOfKeys: number, ...keysThenArgs: (string | number | Buffer)[]) => Promise<[number, Buffer | null | undefined]>;

const SETTLE_COMMAND = "compactdSettle";

/** The settling script on `redis`, defined once per connection (ioredis sends its SHA, and the script itself only when Redis does not know it). */
function settleScript(redis: RedisClient): SettleScript {
  const client = redis as unknown as Record<string, SettleScript | undefined> & { defineCommand: RedisClient["defineCommand"] };
  if (client[`${SETTLE_COMMAND}Buffer`] === undefined) client.defineCommand(SETTLE_COMMAND, { lua: SETTLE_LUA });
  const command = client[`${SETTLE_COMMAND}Buffer`]!;
  return (...args) => command.apply(redis, args);
}

/** A stored outcome, decoded; undefined when there is none. */
function outcomeOf(stored: Buffer | null | undefined): FinalOutcome | undefined {
  return stored === null || stored === undefined ? undefined : (decodePayload(packedOf(stored)) as FinalOutcome);
}

/** An outcome's text in the configured form (see {@link ResultEncoding}). */
function storedForm(text: string, encoding: ResultEncoding): string | Buffer {
  if (encoding === "base64") return encodeJson(text);
  return Buffer.concat([Buffer.of(RAW_MARK), encodeJsonText(text)]);
}

/** The compressed outcome in a stored value of either form. */
function packedOf(stored: Buffer): Packed {
  return stored[0] === RAW_MARK ? stored.subarray(1) : stored.toString("latin1");
}
