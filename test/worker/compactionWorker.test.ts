import { randomUUID } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { replacesOf } from "../../src/core/replaces.js";
import {
  COMPACTION_JOB_NAME,
  idempotentJobSeed,
  inFlightId,
  jobIdInShard,
  newJobId,
  PRIORITY_BY_REASON,
  shardFor,
  shardOfJobId,
  type CompactionJobData,
} from "../../src/queue/compactionJob.js";
import { createCompactionQueue, type CompactionQueue } from "../../src/queue/compactionQueue.js";
import { serviceKeys, shardPrefix } from "../../src/queue/queueNames.js";
import { RESULT_FIELDS_ADDED_LATER, ResultStore, type StoredResult } from "../../src/queue/resultStore.js";
import { closeRedisConnection, createRedisConnection, type RedisClient } from "../../src/queue/redisConnection.js";
import type { Behaviour, RecordedRequest } from "../helpers/fakeAnthropic.js";
import { conversation, fillerText, reactTurn, type RawMessage } from "../helpers/conversations.js";
import { earlierBrotli } from "../helpers/earlierBrotli.js";
import { markedConversation, markedRequest } from "../helpers/markedConversation.js";
import { bearer, TEST_WEBHOOK_SECRET } from "../helpers/serviceConfig.js";
import { startServiceHarness, type ServiceHarness } from "../helpers/serviceHarness.js";
import { waitUntil } from "../helpers/waitUntil.js";
import { testJobData } from "../helpers/jobData.js";
import { storedResult } from "../helpers/storedResult.js";

/** Per-marker faults: the first `times` summarization requests of a marker get `behaviour`. */
const faults = new Map<string, { behaviour: Behaviour; times: number }>();
/** Tests with a fault no marker table expresses add their own script; the first answer wins. */
const scripts = new Set<(request: RecordedRequest) => Behaviour | undefined>();
function script(request: RecordedRequest): Behaviour {
  for (const own of scripts) {
    const behaviour = own(request);
    if (behaviour !== undefined) return behaviour;
  }
  for (const [marker, fault] of faults) {
    if (request.userText.includes(marker) && fault.times > 0) {
      fault.times--;
      return fault.behaviour;
    }
  }
  return { kind: "reply" };
}

/** Two complete turns and a long third one, so the cut falls inside the third: a history and a turn-prefix summary. */
function splitTurnConversation(m: string): RawMessage[] {
  return conversation(reactTurn({ rounds: 3, toolResultChars: 2_000 }), reactTurn({ rounds: 3, toolResultChars: 2_000 }), reactTurn({ rounds: 12, toolResultChars: 2_000 })).map(
    (message) => (message.role === "user" && typeof message.content === "string" ? { ...message, content: `${m} ${message.content}` } : message),
  );
}

function marker(): string {
  return `job-${randomUUID()}`;
}

let h: ServiceHarness;
beforeAll(async () => {
  h = await startServiceHarness("worker", { script });
});
afterAll(async () => {
  await h.close();
});

describe("a compaction job", () => {
  it("completes with a summary whose messages replace the request's and carry the swap contract", async () => {
    const request = markedRequest(marker(), { conversationId: "conv-e2e" });
    const submitted = await h.submit(request);
    expect(submitted.status).toBe(202);
    const view = await h.view(String(submitted.body.id), 20);
    expect(view).toMatchObject({ status: "completed", attempts: 1, conversationId: "conv-e2e" });
    const result = view.result as { messages: unknown[]; replaces: unknown; degraded: boolean; tokensAfter: number; tokensBefore: number };
    expect(result.replaces).toEqual(replacesOf(request.messages as unknown[]));
    expect(result.degraded).toBe(false);
    expect(result.messages.length).toBeLessThan((request.messages as unknown[]).length);
    expect(result.tokensAfter).toBeLessThan(result.tokensBefore);
    expect(view.finishedAt).not.toBeNull();
    // The conversation is free again, and a finished job cannot be cancelled.
    expect((await h.submit(markedRequest(marker(), { conversationId: "conv-e2e" }))).status).toBe(202);
    const cancel = await h.app.inject({ method: "DELETE", url: `/v1/compactions/${String(submitted.body.id)}`, headers: bearer("acme") });
    expect(cancel.statusCode).toBe(409);
    expect(cancel.json().error.code).toBe("job_finished");
    const metrics = await h.workerMetrics.registry.getSingleMetricAsString("compactd_jobs_total");
    expect(metrics).toMatch(/outcome="completed"\} [1-9]/);
  });

  it("says stillAboveThreshold in its view, its callback and the worker's metrics when its newest message alone is above the threshold", async () => {
    const m = marker();
    const counted = () => stillAboveThresholdCounted("overflow");
    const before = await counted();
    // 20000-token window, 4000 reserved: the newest message alone is about 25000 tokens, and it is kept whole.
    const request = markedRequest(m, { reason: "overflow", callbackUrl: h.receiver.url("/above") });
    const messages = [...(request.messages as RawMessage[]), { role: "user", content: `${m} ${fillerText(100_000, 5)}` }];
    const { result, calledBack } = await completedAndCalledBack(String((await h.submit({ ...request, messages })).body.id));
    expect(result.tokensAfter).toBeGreaterThan(20_000 - 4_000);
    expect(result.stillAboveThreshold).toBe(true);
    expect(calledBack.stillAboveThreshold).toBe(true);
    expect(await counted()).toBe(before + 1);
  });

  it("says stillAboveThreshold false, and does not count it, when the compacted context is below the threshold", async () => {
    const before = await stillAboveThresholdCounted("manual");
    const submitted = await h.submit(markedRequest(marker(), { reason: "manual", callbackUrl: h.receiver.url("/below") }));
    const { result, calledBack } = await completedAndCalledBack(String(submitted.body.id));
    expect(result.tokensAfter).toBeLessThanOrEqual(20_000 - 4_000);
    expect(result.stillAboveThreshold).toBe(false);
    expect(calledBack.stillAboveThreshold).toBe(false);
    expect(await stillAboveThresholdCounted("manual")).toBe(before);
  });

  it("shows and calls back a result an earlier version stored, without the fields added since, as it was stored", async () => {
    // Stored by a worker of an earlier version that died before BullMQ recorded the job's end: this worker delivers it.
    const earlier: Partial<StoredResult> = storedResult({ tokensAfter: 123 });
    for (const field of RESULT_FIELDS_ADDED_LATER) delete earlier[field];
    const id = newJobId();
    const redis = createRedisConnection(h.config.redisUrl, "worker");
    try {
      await new ResultStore(redis, serviceKeys(h.config.queuePrefix), 60).settleOnce(id, { status: "completed", finishedAt: Date.now(), result: earlier as StoredResult });
    } finally {
      await closeRedisConnection(redis);
    }
    await queueDirectly(testJobData({ contextWindow: 20_000, reason: "manual", callbackUrl: h.receiver.url("/earlier") }), id);
    const { result, calledBack } = await completedAndCalledBack(id);
    expect(result).toEqual(earlier);
    expect(result).not.toHaveProperty("stillAboveThreshold");
    expect(calledBack).toEqual(earlier);
  });

  it("posts a signed compaction.completed callback holding the same result as the job view", async () => {
    const submitted = await h.submit(markedRequest(marker(), { callbackUrl: h.receiver.url("/done"), metadata: { ticket: 42 } }));
    const id = String(submitted.body.id);
    const view = await h.view(id, 20);
    await waitUntil(() => h.receiver.received.some((callback) => callback.body.includes(id)), "the callback arrives");
    const callback = h.receiver.received.find((received) => received.body.includes(id))!;
    const event = new Webhook(TEST_WEBHOOK_SECRET).verify(callback.body, callback.headers as Record<string, string>) as Record<string, unknown>;
    expect(event).toMatchObject({ type: "compaction.completed", id, metadata: { ticket: 42 } });
    expect(event.result).toEqual(view.result);
  });

  it("is retried after a backoff when the summarizer is overloaded, and completes with a real summary", async () => {
    const m = marker();
    // Enough 529s to exhaust the first job attempt: the SDK's three tries for
    // each of the compactor's two attempts, for the history summary and (when
    // the cut splits a turn) the turn-prefix summary.
    faults.set(m, { behaviour: { kind: "error", status: 529 }, times: 12 });
    const submitted = await h.submit(markedRequest(m));
    const view = await h.view(String(submitted.body.id), 30);
    expect(view.status).toBe("completed");
    expect((view.result as { degraded: boolean }).degraded).toBe(false);
    expect(view.attempts).toBeGreaterThanOrEqual(2);
  });

  it("completes degraded on its last attempt when the summarizer keeps failing", async () => {
    const m = marker();
    faults.set(m, { behaviour: { kind: "error", status: 500 }, times: Number.POSITIVE_INFINITY });
    const submitted = await h.submit(markedRequest(m));
    const view = await h.view(String(submitted.body.id), 30);
    expect(view.status).toBe("completed");
    expect(view.attempts).toBe(h.config.jobAttempts);
    const result = view.result as { degraded: boolean; degradedReason: string; messages: unknown[] };
    expect(result.degraded).toBe(true);
    expect(result.degradedReason).toContain("500");
    expect(result.messages.length).toBeGreaterThan(0);
  });

  it("is not retried when only a recovered call failed transiently and the degradation itself cannot pass", async () => {
    const m = marker();
    // The turn-prefix summary fails once (recovering on the compactor's second
    // call); the history summary is cut at its cap every time. Retrying the
    // job cannot help: what degraded it is a truncation, not the blip.
    let prefixFailures = 3;
    const split = (request: RecordedRequest): Behaviour | undefined => {
      if (!request.userText.includes(m)) return undefined;
      if (request.userText.includes("beginning of a single turn")) {
        return prefixFailures-- > 0 ? { kind: "error", status: 500 } : { kind: "reply" };
      }
      return { kind: "reply", stopReason: "max_tokens" };
    };
    scripts.add(split);
    const request = { ...markedRequest(m), messages: splitTurnConversation(m) };
    const submitted = await h.submit(request);
    const view = await h.view(String(submitted.body.id), 30);
    scripts.delete(split);
    expect(view.status).toBe("completed");
    const result = view.result as { splitTurn: boolean; degradation: { kind: string; cause: string }[] };
    expect(result.splitTurn).toBe(true);
    expect(result.degradation.map((d) => `${d.kind}:${d.cause}`)).toEqual(["history:truncated", "history:truncated"]);
    expect(view.attempts).toBe(1);
  });

  it("is aborted while summarizing when it is cancelled, and ends cancelled with its callback", async () => {
    const m = marker();
    faults.set(m, { behaviour: { kind: "silent" }, times: Number.POSITIVE_INFINITY });
    const submitted = await h.submit(markedRequest(m, { conversationId: "conv-cancel", callbackUrl: h.receiver.url("/cancelled") }));
    const id = String(submitted.body.id);
    await waitUntil(() => h.fake.requests.some((request) => request.userText.includes(m)), "the summarizer is called");
    const cancel = await h.app.inject({ method: "DELETE", url: `/v1/compactions/${id}`, headers: bearer("acme") });
    expect([200, 202]).toContain(cancel.statusCode);
    const view = await h.view(id, 10);
    expect(view).toMatchObject({ status: "cancelled", error: { code: "cancelled" } });
    await waitUntil(
      () => h.fake.requests.filter((request) => request.userText.includes(m)).every((request) => request.disconnected),
      "the summarizer calls are aborted",
    );
    await waitUntil(() => h.receiver.received.some((callback) => callback.body.includes(id)), "the failure callback arrives");
    const event = JSON.parse(h.receiver.received.find((callback) => callback.body.includes(id))!.body);
    expect(event).toMatchObject({ type: "compaction.failed", id, error: { code: "cancelled", status: "cancelled" } });
    expect((await h.submit(markedRequest(marker(), { conversationId: "conv-cancel" }))).status).toBe(202);
  });

  it("fails at once, without retries, when its stored conversation cannot be decoded", async () => {
    const id = await queueDirectly(testJobData({ payload: "not-compressed", contextWindow: 20_000, reason: "manual" }));
    const view = await h.view(id, 10);
    expect(view).toMatchObject({ status: "failed", attempts: 1, error: { code: "invalid_payload" } });
  });

  it("fails at once with payload_missing, in its view and its callback, when Redis no longer holds its payload", async () => {
    // Job data as the API queues it, but no payload key beside it (expired, or lost with Redis data).
    const id = await queueDirectly(testJobData({ contextWindow: 20_000, reason: "manual", callbackUrl: h.receiver.url("/missing") }));
    const view = await h.view(id, 10);
    expect(view).toMatchObject({ status: "failed", attempts: 1, error: { code: "payload_missing" } });
    expect((view.error as { message: string }).message).toContain("no longer in Redis");
    await waitUntil(() => h.receiver.received.some((callback) => callback.body.includes(id)), "the failure callback arrives");
    const event = JSON.parse(h.receiver.received.find((callback) => callback.body.includes(id))!.body);
    expect(event).toMatchObject({ type: "compaction.failed", id, error: { code: "payload_missing", status: "failed" } });
  });

  it("fails at once with payload_missing when Redis lost the job's own record while it waited: counted as failed, its id 410, its conversation free", async () => {
    const conversationId = `conv-lost-${randomUUID()}`;
    const idempotencyKey = randomUUID();
    const seed = idempotentJobSeed("acme", idempotencyKey);
    const id = jobIdInShard(seed, shardFor("acme", conversationId, seed, h.config.queueShards));
    const countedBefore = await lostJobsCounted();
    await withLostRecord(id, testJobData({ conversationId, contextWindow: 20_000, reason: "overflow" }), async (queue) => {
      await waitUntil(async () => !PENDING.includes(await queue.getJobState(id)), "a worker ends the job");
      // Nothing of it is left in the failed set for compactd_queue_jobs to count, nor for the in-flight key to point at.
      expect(await queue.getJobState(id)).toBe("unknown");
    });
    // Counted as any failure is; what asked for it was in the record, so its reason is "unknown".
    expect(await lostJobsCounted()).toBe(countedBefore + 1);
    const response = await h.app.inject({ method: "GET", url: `/v1/compactions/${id}`, headers: bearer("acme") });
    expect(response.statusCode, response.body).toBe(410);
    expect(response.json().error.code).toBe("gone");
    // Submitted again, with the same Idempotency-Key: a new job, not the lost one in flight or its key reused.
    const again = await h.app.inject({
      method: "POST",
      url: "/v1/compactions",
      headers: { ...bearer("acme"), "idempotency-key": idempotencyKey },
      payload: markedRequest(marker(), { conversationId }),
    });
    expect(again.statusCode, again.body).toBe(202);
    expect(again.json().id).toBe(id);
    expect(await h.view(id, 20)).toMatchObject({ status: "completed", attempts: 1 });
  });

  it("is not counted again when Redis lost its record after a worker had settled it", async () => {
    const countedBefore = await lostJobsCounted();
    const id = newJobId();
    const redis = createRedisConnection(h.config.redisUrl, "worker");
    try {
      // Settled (and counted) by a worker whose finishing BullMQ never recorded: the job's record was lost first.
      const results = new ResultStore(redis, serviceKeys(h.config.queuePrefix), 60);
      await results.settleOnce(id, { status: "failed", finishedAt: Date.now(), error: { code: "internal_error", message: "settled before the loss" } });
    } finally {
      await closeRedisConnection(redis);
    }
    await withLostRecord(id, testJobData({ contextWindow: 20_000, reason: "manual" }), async (queue) => {
      await waitUntil(async () => !PENDING.includes(await queue.getJobState(id)), "a worker ends the job");
    });
    expect(await lostJobsCounted()).toBe(countedBefore);
  });

  it("is counted as failed once, with reason unknown, when its record was lost and BullMQ fails it for stalling", async () => {
    const countedBefore = await lostJobsCounted();
    const id = newJobId();
    // What BullMQ's stalled-job check leaves of a job whose record was lost: the flag that fails it when next taken.
    await withLostRecord(id, testJobData({ contextWindow: 20_000, reason: "manual" }), async (queue, jobKey, redis) => {
      await redis.hset(jobKey, "defa", "job stalled more than allowable limit");
      await waitUntil(async () => !PENDING.includes(await queue.getJobState(id)), "a worker fails the job");
    });
    await waitUntil(async () => (await lostJobsCounted()) > countedBefore, "the failure is counted");
    expect(await lostJobsCounted()).toBe(countedBefore + 1);
    expect(await workerScrape()).not.toContain('reason="undefined"');
    expect(h.workerErrors.map((error) => error.message)).toEqual([]);
  });

  it("still completes a job queued by an earlier version, its payload inline in the job data as brotli in base64", async () => {
    const messages = markedConversation(marker());
    const inline = earlierBrotli(Buffer.from(JSON.stringify({ messages, format: "auto" })), 5, false).toString("base64");
    const id = await queueDirectly(
      testJobData({ payload: inline, replaces: replacesOf(messages), contextWindow: 20_000, settings: { reserveTokens: 4_000 }, reason: "manual" }),
    );
    const view = await h.view(id, 20);
    expect(view).toMatchObject({ status: "completed", attempts: 1 });
    expect((view.result as { replaces: unknown }).replaces).toEqual(replacesOf(messages));
    expect((view.result as { tokensAfter: number; tokensBefore: number }).tokensAfter).toBeLessThan((view.result as { tokensBefore: number }).tokensBefore);
  });
});

/** BullMQ states of a job no worker has ended yet. */
const PENDING: readonly string[] = ["delayed", "waiting", "prioritized", "active"];

/**
 * Queues `data` under `id` as the API does (priority, the conversation's
 * in-flight key), then loses its record as an evicting maxmemory-policy or a
 * failover that lost writes would: the job's hash, not its place in the
 * queue. `during` sees the job handed to the workers.
 */
async function withLostRecord(
  id: string,
  data: CompactionJobData,
  during: (queue: CompactionQueue, jobKey: string, redis: RedisClient) => Promise<void>,
): Promise<void> {
  const redis = createRedisConnection(h.config.redisUrl, "api");
  const queue = createCompactionQueue(redis, { prefix: shardPrefix(h.config.queuePrefix, shardOfJobId(id)), attempts: 3, backoffMs: 10, retentionSeconds: 60 });
  try {
    // Queued for later, so no worker takes it before its record is gone.
    await queue.add(COMPACTION_JOB_NAME, data, {
      jobId: id,
      priority: PRIORITY_BY_REASON[data.reason],
      delay: 600_000,
      ...(data.conversationId !== undefined && { deduplication: { id: inFlightId(data.tenant, data.conversationId) } }),
    });
    const jobKey = `${queue.opts.prefix}:${queue.name}:${id}`;
    await redis.del(jobKey);
    await queue.promoteJobs();
    await during(queue, jobKey, redis);
  } finally {
    await queue.close();
    await closeRedisConnection(redis);
  }
}

/** The worker's /metrics, as Prometheus scrapes it. */
async function workerScrape(): Promise<string> {
  return (await fetch(`http://127.0.0.1:${h.workers[0]!.metricsPort}/metrics`)).text();
}

/**
 * The result of job `id` once it has completed, in its view and in its
 * callback. The callback is sent after the job's outcome is counted, so the
 * worker's metrics have it by then.
 */
async function completedAndCalledBack(id: string): Promise<{ result: Record<string, unknown>; calledBack: Record<string, unknown> }> {
  const view = await h.view(id, 20);
  expect(view.status).toBe("completed");
  await waitUntil(() => h.receiver.received.some((callback) => callback.body.includes(id)), "the callback arrives");
  const callback = h.receiver.received.find((received) => received.body.includes(id))!;
  return { result: view.result as Record<string, unknown>, calledBack: (JSON.parse(callback.body) as { result: Record<string, unknown> }).result };
}

/** `compactd_still_above_threshold_total{reason}` on the worker's /metrics. */
async function stillAboveThresholdCounted(reason: string): Promise<number> {
  const line = new RegExp(`^compactd_still_above_threshold_total\\{reason="${reason}"\\} (\\d+)$`, "m").exec(await workerScrape());
  if (line === null) throw new Error(`the worker exports no compactd_still_above_threshold_total for reason ${reason}`);
  return Number(line[1]);
}

/** `compactd_jobs_total{reason="unknown",outcome="failed"}` on the worker's /metrics: jobs whose record Redis lost. */
async function lostJobsCounted(): Promise<number> {
  const line = /^compactd_jobs_total\{reason="unknown",outcome="failed"\} (\d+)$/m.exec(await workerScrape());
  return line === null ? 0 : Number(line[1]);
}

/** Adds `data` to the harness's queue as it is, past the API (as another version, or a fault, would leave it), as job `id`; returns the id. */
async function queueDirectly(data: CompactionJobData, id = newJobId()): Promise<string> {
  const redis = createRedisConnection(h.config.redisUrl, "api");
  const queue = createCompactionQueue(redis, { prefix: h.config.queuePrefix, attempts: 3, backoffMs: 10, retentionSeconds: 60 });
  try {
    await queue.add(COMPACTION_JOB_NAME, data, { jobId: id });
    return id;
  } finally {
    await queue.close();
    await closeRedisConnection(redis);
  }
}

describe("a batch", () => {
  it("calls back per item (at the item's own callbackUrl, else the batch's) and once more with batch.completed", async () => {
    const response = await h.app.inject({
      method: "POST",
      url: "/v1/compactions/batch",
      headers: bearer("acme"),
      payload: {
        items: [
          markedRequest(marker(), { metadata: { item: "a" } }),
          { ...markedRequest(marker()), callbackUrl: h.receiver.url("/item-b") },
          { messages: markedConversation(marker(), 1), contextWindow: 200_000 },
        ],
        callbackUrl: h.receiver.url("/batch"),
        metadata: { nightly: true },
      },
    });
    expect(response.statusCode).toBe(202);
    const batchId = response.json().id as string;
    const [itemA, itemB] = response.json().items as { id: string }[];
    const events = () =>
      h.receiver.received
        .map((callback) => ({ path: callback.path, event: JSON.parse(callback.body) as Record<string, unknown> }))
        .filter(({ event }) => event.id === batchId || event.batchId === batchId);
    await waitUntil(() => events().length >= 3, "two item callbacks and the batch callback arrive", 30_000);

    const at = (path: string) => events().filter((e) => e.path === path).map((e) => e.event);
    expect(at("/batch")).toHaveLength(2);
    expect(at("/batch")).toContainEqual(
      expect.objectContaining({ type: "compaction.completed", id: itemA!.id, batchId, metadata: { item: "a" } }),
    );
    expect(at("/batch")).toContainEqual(
      expect.objectContaining({
        type: "batch.completed",
        id: batchId,
        result: expect.objectContaining({ counts: { completed: 2, nothing_to_compact: 1 } }),
        metadata: { nightly: true },
      }),
    );
    const [ownCallback] = at("/item-b");
    expect(ownCallback).toMatchObject({ type: "compaction.completed", id: itemB!.id, batchId });
    expect((ownCallback!.result as { messages: unknown[] }).messages.length).toBeGreaterThan(0);
    const view = await h.app.inject({ method: "GET", url: `/v1/batches/${batchId}`, headers: bearer("acme") });
    expect(view.json()).toMatchObject({ status: "completed", counts: { completed: 2, nothing_to_compact: 1 } });
  });

  it("refuses an item's callbackUrl the service would not call, naming the item's field", async () => {
    const response = await h.app.inject({
      method: "POST",
      url: "/v1/compactions/batch",
      headers: bearer("acme"),
      payload: { items: [markedRequest(marker()), { ...markedRequest(marker()), callbackUrl: "http://169.254.169.254/latest" }] },
    });
    expect(response.statusCode).toBe(400);
    expect(response.json().error).toMatchObject({ code: "invalid_callback_url", field: "items[1].callbackUrl" });
  });
});

describe("the worker process", () => {
  it("reports on /healthz that it is consuming", async () => {
    const worker = h.workers[0]!;
    const response = await fetch(`http://127.0.0.1:${worker.metricsPort}/healthz`);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ status: "ok", consuming: true });
    const metrics = await (await fetch(`http://127.0.0.1:${worker.metricsPort}/metrics`)).text();
    expect(metrics).toContain("compactd_summarizer_requests_total");
  });

  it("hands an unfinished job back on shutdown, and another worker completes it", async () => {
    const m = marker();
    faults.set(m, { behaviour: { kind: "silent" }, times: Number.POSITIVE_INFINITY });
    const leaving = await h.startWorker({ shutdownTimeoutMs: 500 });
    // Only the new worker may take the job: the others stop consuming.
    await Promise.all(h.workers.filter((w) => w !== leaving).map((w) => w.close()));
    const submitted = await h.submit(markedRequest(m));
    const id = String(submitted.body.id);
    await waitUntil(() => h.fake.requests.some((request) => request.userText.includes(m)), "the job is being summarized");
    await leaving.close();
    expect(leaving.consuming()).toBe(false);
    expect((await h.view(id)).status).toBe("queued");
    faults.delete(m);
    await h.startWorker();
    const view = await h.view(id, 20);
    expect(view.status).toBe("completed");
    expect((view.result as { degraded: boolean }).degraded).toBe(false);
  });
});
