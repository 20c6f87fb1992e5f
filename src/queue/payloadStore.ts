/**
 * Queued conversations, each in a Redis key of its own beside its job.
 *
 * BullMQ stores job data as JSON text, so a compressed conversation inside it
 * had to be base64: a third more bytes, on the largest thing the service
 * keeps (issue 11 measured a queued job at 42% of its request's JSON for a
 * conversation of thinking signatures, which do not compress). As the raw
 * compressed bytes under a key in the job's own slot (queueNames.ts), the same
 * job costs the compressed size and no more.
 *
 * The key is named by the submission, not by the job id: an idempotent replay
 * resolves to an existing job only inside BullMQ's add, after the payload has
 * been written, and a replay carrying another body must not overwrite the
 * payload of the job it names. So the payload is written first (a worker
 * never sees a job without it), and deleted again when the add turns out to
 * have created nothing (a replay, a reused key, a conversation already in
 * flight) or failed without storing the job. Settling a job deletes it for
 * good, in the same script that stores the outcome (ResultStore.settleOnce):
 * completed, failed after its last attempt, cancelled, stalled too often.
 * Retries find it where it was.
 *
 * Every key also expires after {@link PAYLOAD_TTL_SECONDS}, a safety net for
 * what the deletes above miss: an API process dying between the write and the
 * add, a delete lost to a Redis outage, a job an operator removed by hand.
 */
import type { CompactionJobData, CompactionSubmission } from "./compactionJob.js";
import { submitCompaction, type CompactionQueue, type SubmitOutcome } from "./compactionQueue.js";
import type { Packed } from "./payloadCodec.js";
import type { ServiceKeys } from "./queueNames.js";
import type { RedisClient } from "./redisConnection.js";

/**
 * 30 days. A queued job has no deadline of its own (BullMQ keeps it until a
 * worker takes it), so this must outlast any backlog that can still drain:
 * a full `COMPACTD_MAX_BACKLOG` (10,000) drains in that time even at one job
 * every four minutes, and retries add seconds (`COMPACTD_JOB_BACKOFF_MS`
 * doubled per attempt). A job still queued after a month has had no worker
 * for weeks; it then fails with `payload_missing` rather than run. An orphan
 * costs its compressed bytes for that long; orphans only come from a crash or
 * an outage between two Redis calls.
 */
const PAYLOAD_TTL_SECONDS = 30 * 24 * 60 * 60;

export class PayloadStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: ServiceKeys,
  ) {}

  async save(jobId: string, submissionId: string, payload: Uint8Array): Promise<void> {
    // ioredis sends a Buffer as bytes and anything else as its string form; a
    // payload back from an intake thread is a plain Uint8Array: view it as a Buffer.
    const bytes = Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength);
    await this.redis.set(this.keys.payload(jobId, submissionId), bytes, "EX", PAYLOAD_TTL_SECONDS);
  }

  /**
   * The compressed conversation of job `jobId`: inline in the job data of a
   * job queued by an earlier version, else the bytes of its key, read as
   * bytes. Undefined when the key is gone (expired, or lost with Redis data).
   */
  async read(jobId: string, data: CompactionJobData): Promise<Packed | undefined> {
    const key = this.keyOf(jobId, data);
    if (key === undefined) return data.payload;
    return (await this.redis.getBuffer(key)) ?? undefined;
  }

  /** The key of job `jobId`'s compressed conversation; undefined for a job of an earlier version that carries it inline. */
  keyOf(jobId: string, data: CompactionJobData): string | undefined {
    return data.payload !== undefined ? undefined : this.keys.payload(jobId, data.submissionId);
  }

  async delete(jobId: string, submissionId: string): Promise<void> {
    await this.redis.unlink(this.keys.payload(jobId, submissionId));
  }
}

/**
 * Adds a job with its payload (see submitCompaction for the outcomes): the
 * payload first, then the job; the payload is deleted again unless the add
 * created this very submission's job.
 */
export async function submitWithPayload(
  queue: CompactionQueue,
  payloads: PayloadStore,
  jobId: string,
  { data, payload }: CompactionSubmission,
  idempotent: boolean,
): Promise<SubmitOutcome> {
  await payloads.save(jobId, data.submissionId, payload);
  let outcome: SubmitOutcome;
  try {
    outcome = await submitCompaction(queue, jobId, data, idempotent);
  } catch (err) {
    // The add may have run before its reply was lost (a command timeout): the
    // job is read on the same connection, so after the add, and its payload
    // kept if it is ours. If even that read fails, the TTL collects the payload.
    const stored = await queue.getJob(jobId).catch(() => null);
    if (stored === undefined || (stored !== null && stored.data.submissionId !== data.submissionId)) {
      await payloads.delete(jobId, data.submissionId).catch(() => undefined);
    }
    throw err;
  }
  // A cleanup that fails must not fail the request it cleans up after: the TTL collects it.
  if (outcome.kind !== "created") await payloads.delete(jobId, data.submissionId).catch(() => undefined);
  return outcome;
}
