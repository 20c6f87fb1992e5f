/**
 * `POST /v1/compactions/batch` and `GET /v1/batches/:id`.
 *
 * Each queued item calls back like a single compaction (`compaction.completed`
 * or `compaction.failed`) at its own callbackUrl or else the batch's, and the
 * batch's callbackUrl also gets `batch.completed` once every item is done.
 *
 * A batch is all-or-nothing about its input (one malformed item refuses the
 * whole request with the item's field named, before anything is queued) but
 * not about the one-in-flight rule: an item whose conversation is already
 * being compacted is reported as `in_flight` with that job's id, and the rest
 * go ahead.
 */
import type { FastifyInstance, FastifyReply } from "fastify";
import type { JobState } from "bullmq";
import type { BatchItem, BatchRecord } from "../queue/batchStore.js";
import { batchItemJobSeed, idempotentBatchId, isBatchId, isIssuedId, jobIdInShard, newBatchId, shardFor } from "../queue/compactionJob.js";
import type { FinalStatus } from "../queue/resultStore.js";
import { ApiError, gone } from "./apiError.js";
import type { ApiServices } from "./apiServices.js";
import { takeBody } from "./jsonBodies.js";
import { checkCallback, ensureCapacity, keyReused, readIdempotencyKey } from "./compactionRoutes.js";
import { ErrorCodes } from "../client/errorCodes.js";

export type BatchItemStatus = FinalStatus | "queued" | "active" | "nothing_to_compact" | "in_flight";

export interface BatchItemView {
  readonly id?: string;
  readonly status: BatchItemStatus;
  /** For `in_flight`: the job already compacting this item's conversation. */
  readonly inFlightId?: string;
  /** For `nothing_to_compact`: see BatchItem. */
  readonly stillAboveThreshold?: boolean;
}

export interface BatchView {
  readonly id: string;
  readonly status: "running" | "completed";
  readonly createdAt: string;
  readonly counts: Readonly<Partial<Record<BatchItemStatus, number>>>;
  readonly items: readonly BatchItemView[];
  readonly metadata?: unknown;
}

export function registerBatchRoutes(app: FastifyInstance, services: ApiServices): void {
  const { batches, queues, lifecycle } = services;

  app.post("/v1/compactions/batch", async (request, reply) => {
    const { tenant } = request;
    const idempotencyKey = readIdempotencyKey(request);
    const batchId = idempotencyKey === undefined ? newBatchId() : idempotentBatchId(tenant, idempotencyKey);
    const examined = await services.intake.batch({
      kind: "batch",
      body: takeBody(request).body,
      tenant,
      idempotent: idempotencyKey !== undefined,
      maxItems: services.config.maxBatchItems,
      batchId,
    });
    const { request: body, requestDigest } = examined;
    if (idempotencyKey !== undefined) await services.whenRedisReady();
    const existing = idempotencyKey === undefined ? undefined : await batches.get(batchId);
    if (existing !== undefined) {
      if (existing.tenant !== tenant || existing.requestDigest !== requestDigest) throw keyReused();
      return acceptedBatch(reply, await viewBatch(services, existing), true);
    }
    if (body.callbackUrl !== undefined) await checkCallback(services, body.callbackUrl, "callbackUrl");
    for (const [index, item] of body.items.entries()) {
      if (item.callbackUrl !== undefined) await checkCallback(services, item.callbackUrl, `items[${index}].callbackUrl`);
    }
    if ("refused" in examined.decisions) throw examined.decisions.refused;
    const decisions = examined.decisions;
    const jobIds = decisions.map((decision, index) => {
      const seed = batchItemJobSeed(batchId, index);
      return decision.kind === "job" ? jobIdInShard(seed, shardFor(tenant, decision.data.conversationId, seed, queues.shards.length)) : undefined;
    });
    await ensureCapacity(services, jobIds.filter((id): id is string => id !== undefined));
    // Two requests can both pass the look-up above; only the one holding the key may queue items under it.
    if (idempotencyKey !== undefined && !(await batches.claim(batchId, tenant, requestDigest))) throw keyReused();

    const items: BatchItem[] = [];
    for (const [index, decision] of decisions.entries()) {
      if (decision.kind === "nothing_to_compact") {
        lifecycle.nothingToCompact(body.items[index]!.reason, decision.stillAboveThreshold);
        items.push({ status: "nothing_to_compact", stillAboveThreshold: decision.stillAboveThreshold });
        continue;
      }
      const jobId = jobIds[index]!;
      const outcome = await lifecycle.submit(jobId, decision, idempotencyKey !== undefined);
      // The claim keeps a different request's jobs out from under this key; one found there anyway was queued by
      // an API from before the claim, whose request still owns the key: the claim is let go so its retry is not refused.
      if (outcome.kind === "keyReused") {
        await batches.release(batchId, tenant, requestDigest);
        throw keyReused();
      }
      items.push(outcome.kind === "inFlight" ? { status: "in_flight", inFlightId: outcome.jobId } : { status: "queued", id: jobId });
    }
    const record: BatchRecord = {
      id: batchId,
      tenant,
      createdAt: Date.now(),
      requestDigest,
      items,
      ...(body.callbackUrl !== undefined && { callbackUrl: body.callbackUrl }),
      ...(body.metadata !== undefined && { metadata: body.metadata }),
    };
    const created = await batches.create(record);
    const stored = created === "exists" ? ((await batches.get(batchId)) ?? record) : record;
    if (created === "complete") await lifecycle.completeBatch(batchId);
    // "exists": a request with the same Idempotency-Key stored the batch first; this one is its replay.
    return acceptedBatch(reply, await viewBatch(services, stored), created === "exists");
  });

  app.get("/v1/batches/:id", async (request) => {
    const { tenant } = request;
    const id = (request.params as { id: string }).id;
    if (isBatchId(id)) await services.whenRedisReady();
    const record = isBatchId(id) ? await batches.get(id) : undefined;
    // A batch record is kept as long as its jobs' results: an issued id with no record is gone.
    if (record === undefined && isIssuedId(id)) throw gone(`batch ${id}`);
    if (record === undefined || record.tenant !== tenant) throw new ApiError(404, ErrorCodes.notFound, `no batch ${id}`);
    return viewBatch(services, record);
  });
}

/**
 * The 202 for a batch, created or replayed: a replay answers exactly like the
 * original (Location included), so a client that lost the first answer to a
 * timeout and retries with its Idempotency-Key finds the batch the same way.
 */
function acceptedBatch(reply: FastifyReply, view: BatchView, replayed: boolean): FastifyReply {
  void reply.code(202).header("location", `/v1/batches/${view.id}`);
  if (replayed) void reply.header("idempotent-replayed", "true");
  return reply.send(view);
}

async function viewBatch(services: ApiServices, record: BatchRecord): Promise<BatchView> {
  const finished = await services.batches.finished(record.id);
  const items = await Promise.all(
    record.items.map(async (item): Promise<BatchItemView> => {
      if (item.status !== "queued") return item;
      const status = finished.get(item.id) ?? runningStatus(await services.queues.of(item.id).getJobState(item.id));
      return { id: item.id, status };
    }),
  );
  const counts: Partial<Record<BatchItemStatus, number>> = {};
  for (const item of items) counts[item.status] = (counts[item.status] ?? 0) + 1;
  const done = items.every((item) => item.status !== "queued" && item.status !== "active");
  return {
    id: record.id,
    status: done ? "completed" : "running",
    createdAt: new Date(record.createdAt).toISOString(),
    counts,
    items,
    ...(record.metadata !== undefined && { metadata: record.metadata }),
  };
}

/** A job not yet settled: still queued or running, or gone without an outcome (counted failed). */
function runningStatus(state: JobState | "unknown"): BatchItemStatus {
  if (state === "active") return "active";
  if (state === "completed" || state === "failed") return state;
  return state === "unknown" ? "failed" : "queued";
}
