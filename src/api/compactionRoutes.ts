/**
 * `POST /v1/compactions`, `GET /v1/compactions/:id`, `DELETE /v1/compactions/:id`.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { idempotentJobSeed, isIssuedId, isJobId, jobIdInShard, newJobSeed, shardFor } from "../queue/compactionJob.js";
import { backlogOf, type CompactionQueue } from "../queue/compactionQueue.js";
import { isFinished, type JobView } from "../queue/jobView.js";
import { CallbackUrlError, checkCallbackUrl } from "../webhooks/callbackUrl.js";
import { ApiError, gone, invalidField, RETRY_AFTER_SECONDS } from "./apiError.js";
import type { ApiServices } from "./apiServices.js";
import { MAX_WAIT_SECONDS } from "./jobWaiter.js";
import { takeBody } from "./jsonBodies.js";
import { ErrorCodes } from "../client/errorCodes.js";
import { IDEMPOTENCY_KEY_FORM, isIdempotencyKey } from "../client/idempotencyKey.js";

/** How long a DELETE waits for a running job's worker to confirm the abort before answering 202. */
const CANCEL_CONFIRM_MS = 2_000;

export function registerCompactionRoutes(app: FastifyInstance, services: ApiServices): void {
  const { queues, lifecycle } = services;

  app.post("/v1/compactions", async (request, reply) => {
    const { tenant } = request;
    const idempotencyKey = readIdempotencyKey(request);
    const examined = await services.intake.compaction({ kind: "compaction", ...takeBody(request), tenant, idempotent: idempotencyKey !== undefined });
    const { request: body, requestDigest, decision } = examined;
    const seed = idempotencyKey === undefined ? newJobSeed() : idempotentJobSeed(tenant, idempotencyKey);
    const jobId = jobIdInShard(seed, shardFor(tenant, body.conversationId, seed, queues.shards.length));
    if (idempotencyKey !== undefined) {
      // A replay is answered from the job, even when the queue is full. A new
      // job's own id is looked up by its add (one read of the job either way).
      await services.whenRedisReady();
      const earlier = await earlierUse(services, tenant, seed, requestDigest, decision.kind === "job" ? jobId : undefined);
      if (earlier !== undefined) return replay(reply, earlier);
    }
    if (body.callbackUrl !== undefined) await checkCallback(services, body.callbackUrl, "callbackUrl");
    if (decision.kind === "refused") throw decision.error;
    if (decision.kind === "nothing_to_compact") {
      lifecycle.nothingToCompact(body.reason, decision.stillAboveThreshold);
      return reply.code(200).send({ status: "nothing_to_compact", stillAboveThreshold: decision.stillAboveThreshold });
    }
    try {
      await ensureCapacity(services, [jobId]);
    } catch (err) {
      const earlier = idempotencyKey === undefined ? undefined : await replayOf(services, tenant, jobId, requestDigest);
      if (earlier === undefined) throw err;
      return replay(reply, earlier);
    }
    const outcome = await lifecycle.submit(jobId, decision, idempotencyKey !== undefined);
    switch (outcome.kind) {
      case "created":
        request.log.info({ jobId, tenant, conversationId: body.conversationId, reason: body.reason }, "compaction queued");
        return reply
          .code(202)
          .header("location", `/v1/compactions/${jobId}`)
          .send({ id: jobId, status: "queued" });
      case "replayed":
        return replay(reply, (await lifecycle.viewOf(tenant, outcome.job)) ?? { id: jobId, status: "queued" });
      case "keyReused":
        throw keyReused();
      case "inFlight":
        throw inFlight(outcome.jobId);
    }
  });

  app.get("/v1/compactions/:id", async (request, reply) => {
    const { tenant } = request;
    const wait = readWait(request);
    const id = (request.params as { id: string }).id;
    const view = await findJob(services, tenant, id);
    return services.waiters.waitFor(
      id,
      view,
      reread(services, tenant, view),
      (current) => isFinished(current.status),
      Date.now() + wait * 1000,
      abortOnClose(reply),
    );
  });

  app.delete("/v1/compactions/:id", async (request, reply) => {
    const { tenant } = request;
    const id = (request.params as { id: string }).id;
    const view = await findJob(services, tenant, id);
    if (view.status === "cancelled") return view;
    if (isFinished(view.status)) {
      throw new ApiError(409, ErrorCodes.jobFinished, `compaction ${id} has already ${view.status}; there is nothing to cancel`, undefined, id);
    }
    if ((await lifecycle.cancel(id)) === "removed") return (await lifecycle.view(tenant, id)) ?? view;
    // Running (or just taken by a worker): wait a little for its worker to confirm the abort.
    const current = await services.waiters.waitFor(
      id,
      view,
      reread(services, tenant, view),
      (latest) => isFinished(latest.status),
      Date.now() + CANCEL_CONFIRM_MS,
      abortOnClose(reply),
    );
    return reply.code(isFinished(current.status) ? 200 : 202).send(current);
  });
}

/** Reads the job again (keeping the last view if it has meanwhile expired). */
function reread(services: ApiServices, tenant: string, last: JobView): () => Promise<JobView> {
  return async () => (await services.lifecycle.view(tenant, last.id)) ?? last;
}

/**
 * The job; 404 for an id never issued and for another tenant's job alike; 410
 * for an id this service issued that Redis no longer holds (see isIssuedId).
 */
async function findJob(services: ApiServices, tenant: string, id: string): Promise<JobView> {
  const known = isJobId(id) && services.queues.holds(id);
  if (known) await services.whenRedisReady();
  const found = known ? await services.lifecycle.find(tenant, id) : undefined;
  if (found !== undefined && found !== "another tenant's") return found;
  if (known && found === undefined && isIssuedId(id)) throw gone(`compaction ${id}`);
  throw new ApiError(404, ErrorCodes.notFound, `no compaction ${id}`);
}

/**
 * What an Idempotency-Key already stands for, in whichever shard (a key
 * reused for a request about another conversation maps to another shard,
 * and must still be recognised as reused): the job or cancelled job it
 * created for this very request, to replay; a 422 when it was used for
 * another request; undefined when it is unused. Each job is read once:
 * `ownJobId`, the job this request would create, is skipped, because adding
 * it reads it anyway (submitCompaction).
 */
async function earlierUse(
  services: ApiServices,
  tenant: string,
  seed: string,
  requestDigest: string,
  ownJobId: string | undefined,
): Promise<JobView | undefined> {
  const { shards } = services.queues;
  const ids = shards.map((_, shard) => jobIdInShard(seed, shard));
  const jobs = await Promise.all(ids.map((id, shard) => (id === ownJobId ? undefined : shards[shard]!.getJob(id))));
  const job = jobs.find((found) => found !== undefined);
  if (job !== undefined) {
    if (job.data.requestDigest !== requestDigest) throw keyReused();
    return services.lifecycle.viewOf(tenant, job);
  }
  // A cancelled queued job is gone from its queue; its tombstone keeps the digest.
  const tombstones = await Promise.all(ids.map((id) => services.results.getTombstone(id)));
  const index = tombstones.findIndex((tombstone) => tombstone?.requestDigest !== undefined);
  if (index < 0) return undefined;
  const tombstone = tombstones[index]!;
  if (tombstone.requestDigest !== requestDigest) throw keyReused();
  return services.lifecycle.viewOfCancelled(tenant, ids[index]!, tombstone);
}

/** The job `jobId` when this very request created it (422 when another request did), else undefined. */
async function replayOf(services: ApiServices, tenant: string, jobId: string, requestDigest: string): Promise<JobView | undefined> {
  const job = await services.queues.of(jobId).getJob(jobId);
  if (job === undefined) return undefined;
  if (job.data.requestDigest !== requestDigest) throw keyReused();
  return services.lifecycle.viewOf(tenant, job);
}

/** A repeated Idempotency-Key: the job it created, as it is now. */
function replay(reply: FastifyReply, view: Pick<JobView, "id" | "status">): FastifyReply {
  return reply
    .code(202)
    .header("location", `/v1/compactions/${view.id}`)
    .header("idempotent-replayed", "true")
    .send({ id: view.id, status: view.status });
}

export function keyReused(): ApiError {
  return new ApiError(
    422,
    ErrorCodes.idempotencyKeyReused,
    "this Idempotency-Key was already used for a different request; use a new key for a new request",
    "Idempotency-Key",
  );
}

function inFlight(jobId: string): ApiError {
  return new ApiError(
    409,
    ErrorCodes.compactionInFlight,
    `compaction ${jobId} of this conversation is already queued or running; wait for it (GET /v1/compactions/${jobId}) or cancel it`,
    "conversationId",
    jobId,
  );
}

/**
 * 429 when the new jobs would take a shard's backlog past its share of the
 * configured limit. Each shard is held to `COMPACTD_MAX_BACKLOG / shards`
 * (conversations spread evenly), so a request counts only the shards its jobs
 * go to: a count over every shard on every request would grow the API's Redis
 * work with the number of shards.
 */
export async function ensureCapacity(services: ApiServices, jobIds: readonly string[]): Promise<void> {
  await services.whenRedisReady();
  const { queues, config } = services;
  const limit = Math.ceil(config.maxBacklog / queues.shards.length);
  const adding = new Map<CompactionQueue, number>();
  for (const id of jobIds) adding.set(queues.of(id), (adding.get(queues.of(id)) ?? 0) + 1);
  for (const [queue, jobs] of adding) {
    const backlog = await backlogOf([queue]);
    if (backlog + jobs > limit) {
      throw new ApiError(
        429,
        ErrorCodes.backlogFull,
        `${backlog} compactions are waiting (limit ${limit}); retry after ${RETRY_AFTER_SECONDS} s`,
        undefined,
        undefined,
        { "retry-after": String(RETRY_AFTER_SECONDS) },
      );
    }
  }
}

/** Refuses a callback URL the service would not call, naming `field`. */
export async function checkCallback(services: ApiServices, url: string, field: string): Promise<void> {
  if (services.config.webhookSecret === undefined) {
    throw invalidField(field, "callbacks are disabled on this service (COMPACTD_WEBHOOK_SECRET is not set)", ErrorCodes.callbacksDisabled);
  }
  try {
    await checkCallbackUrl(url, services.callbackAllow, {
      ...(services.resolveHost !== undefined && { resolveHost: services.resolveHost }),
    });
  } catch (err) {
    if (err instanceof CallbackUrlError) throw invalidField(field, err.message, err.code);
    throw err;
  }
}

/** The Idempotency-Key header: printable ASCII, at most 255 characters. */
export function readIdempotencyKey(request: FastifyRequest): string | undefined {
  const value = request.headers["idempotency-key"];
  if (value === undefined) return undefined;
  if (!isIdempotencyKey(value)) throw invalidField("Idempotency-Key", IDEMPOTENCY_KEY_FORM);
  return value;
}

function readWait(request: FastifyRequest): number {
  const raw = (request.query as Record<string, unknown>).wait;
  if (raw === undefined || raw === "") return 0;
  const wait = typeof raw === "string" && /^\d{1,4}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(wait <= MAX_WAIT_SECONDS)) throw invalidField("wait", `must be a whole number of seconds from 0 to ${MAX_WAIT_SECONDS}`);
  return wait;
}

/** Aborts when the client hangs up, so a waiting request stops waiting. */
function abortOnClose(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  reply.raw.once("close", () => controller.abort());
  return controller.signal;
}
