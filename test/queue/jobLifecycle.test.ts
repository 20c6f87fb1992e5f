/**
 * The job lifecycle settles a job however many processes settle it, and the
 * outcome is counted once over all of them: two lifecycles here stand for an
 * API process and a worker process, each with its own metrics registry, on
 * one real Redis.
 */
import { Worker } from "bullmq";
import { afterEach, describe, expect, it } from "vitest";
import { createMetrics, type Metrics } from "../../src/metrics/metrics.js";
import { newJobId, type CompactionJobData, type CompactionSubmission } from "../../src/queue/compactionJob.js";
import type { CallbackNotice } from "../../src/queue/jobLifecycle.js";
import { openQueueStores, type QueueStores } from "../../src/queue/queueStores.js";
import { closeRedisConnection, createRedisConnection } from "../../src/queue/redisConnection.js";
import type { FinalOutcome } from "../../src/queue/resultStore.js";
import { deleteKeysUnder } from "../helpers/redisTestPrefix.js";
import { serviceConfig } from "../helpers/serviceConfig.js";
import { testJobData } from "../helpers/jobData.js";
import { storedResult } from "../helpers/storedResult.js";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Process {
  readonly stores: QueueStores;
  readonly metrics: Metrics;
  readonly sent: { url: string; event: CallbackNotice }[];
}

/** `count` processes sharing one deployment (one prefix), configured by `env` beyond the tests' defaults. */
function processes(name: string, count: number, env: Record<string, string> = {}): Process[] {
  const config = serviceConfig(name, env);
  return Array.from({ length: count }, () => {
    const redis = createRedisConnection(config.redisUrl!, "worker", config.queuePrefix);
    const metrics = createMetrics();
    const sent: Process["sent"] = [];
    const stores = openQueueStores(redis, config, {
      metrics,
      notify: async (url, event) => {
        sent.push({ url, event });
      },
      onError: () => undefined,
    });
    cleanups.push(async () => {
      await stores.close();
      await closeRedisConnection(redis);
      await deleteKeysUnder(config.queuePrefix);
    });
    return { stores, metrics, sent };
  });
}

function jobData(overrides: Partial<CompactionJobData> = {}): CompactionJobData {
  return testJobData({ reason: "overflow", submissionId: "s1", callbackUrl: "https://hooks.example.com/compactd", ...overrides });
}

/** A submission of `data` with a payload of a few bytes (the lifecycle never decodes it). */
function submission(data: CompactionJobData): CompactionSubmission {
  return { data, payload: Buffer.from("compressed conversation") };
}

/** `compactd_jobs_total{outcome}` summed over the given processes' registries. */
async function counted(all: readonly Process[], outcome: string): Promise<number> {
  let total = 0;
  for (const { metrics } of all) {
    for (const value of (await metrics.jobsTotal.get()).values) if (value.labels.outcome === outcome) total += value.value;
  }
  return total;
}

describe("the job lifecycle", () => {
  it("settles a job cancelled after its summary was written as cancelled, once, and drops the result", async () => {
    const [worker] = processes("lifecycle-cancelled-late", 1);
    const job = { id: newJobId(), data: jobData(), timestamp: Date.now() - 1000 };
    await worker!.stores.results.markCancelled(job.id);
    const completed: FinalOutcome = { status: "completed", finishedAt: Date.now(), result: storedResult() };

    const recorded = await worker!.stores.lifecycle.settle(job, completed);

    expect(recorded).toMatchObject({ status: "cancelled", error: { code: "cancelled" } });
    expect(await worker!.stores.results.get(job.id)).toEqual(recorded);
    expect(await counted([worker!], "cancelled")).toBe(1);
    expect(await counted([worker!], "completed")).toBe(0);
    expect(worker!.sent.map(({ event }) => event)).toMatchObject([{ type: "compaction.failed", id: job.id, error: { code: "cancelled", status: "cancelled" } }]);
  });

  it("records, counts and notifies the first outcome once, whichever process settles first", async () => {
    const all = processes("lifecycle-settle", 2);
    const [api, worker] = all;
    const job = { id: newJobId(), data: jobData(), timestamp: Date.now() - 1000 };
    const failed: FinalOutcome = { status: "failed", finishedAt: Date.now(), error: { code: "internal_error", message: "boom" } };
    const cancelled: FinalOutcome = { status: "cancelled", finishedAt: Date.now(), error: { code: "cancelled", message: "late" } };

    expect(await worker!.stores.lifecycle.settle(job, failed)).toBe(failed);
    expect(await api!.stores.lifecycle.settle(job, cancelled)).toEqual(failed);
    expect(await worker!.stores.lifecycle.settle(job, failed)).toEqual(failed);

    expect(await counted(all, "failed")).toBe(1);
    expect(await counted(all, "cancelled")).toBe(0);
    // The repeats re-send the stored outcome (the callback queue makes them one delivery).
    const events = all.flatMap((p) => p.sent.map((s) => s.event));
    expect(events.every((event) => event.type === "compaction.failed" && event.error.code === "internal_error")).toBe(true);
  });

  it("counts a stalled job once when a reader and the worker both settle it", async () => {
    const all = processes("lifecycle-stalled", 2);
    const [api, worker] = all;
    const job = { id: newJobId(), data: jobData(), timestamp: Date.now(), failedReason: "job stalled more than allowable limit" };

    await api!.stores.lifecycle.settleStalled(job);
    const recorded = await worker!.stores.lifecycle.settleStalled(job);

    expect(recorded.status === "failed" && recorded.error.code).toBe("stalled");
    expect(await counted(all, "failed")).toBe(1);
  });

  it("shows a job read before a worker took it, and settled since, with the attempt its outcome came from", async () => {
    const [api] = processes("lifecycle-stale-read", 1);
    const { lifecycle, compactionQueues } = api!.stores;
    const jobId = newJobId();
    const data = jobData();
    expect((await lifecycle.submit(jobId, submission(data), false)).kind).toBe("created");
    const queue = compactionQueues.of(jobId);
    const readWhileWaiting = (await queue.getJob(jobId))!;
    expect(readWhileWaiting.attemptsStarted).toBe(0);

    // A worker takes it and fails it at once, as it does a payload that does not decode.
    const worker = new Worker(queue.name, null, { connection: queue.opts.connection, prefix: queue.opts.prefix, autorun: false });
    cleanups.push(() => worker.close());
    expect((await worker.getNextJob("token"))?.id).toBe(jobId);
    const failed: FinalOutcome = { status: "failed", finishedAt: Date.now(), error: { code: "invalid_payload", message: "undecodable" } };
    await lifecycle.settle({ id: jobId, data, timestamp: readWhileWaiting.timestamp }, failed);

    const view = await lifecycle.viewOf("acme", readWhileWaiting);
    expect(view).toMatchObject({ status: "failed", attempts: 1, error: { code: "invalid_payload" } });
    expect(view?.startedAt).not.toBeNull();
  });

  it("cancels a queued job: out of the queue, settled and counted as cancelled once, its callback sent", async () => {
    const [api] = processes("lifecycle-cancel", 1);
    const { lifecycle } = api!.stores;
    const jobId = newJobId();
    const data = jobData({ conversationId: "c1" });
    expect((await lifecycle.submit(jobId, submission(data), false)).kind).toBe("created");
    expect(await api!.stores.payloads.read(jobId, data)).toEqual(Buffer.from("compressed conversation"));

    expect(await lifecycle.cancel(jobId)).toBe("removed");

    expect(await api!.stores.compactionQueues.of(jobId).getJob(jobId)).toBeUndefined();
    expect((await lifecycle.view("acme", jobId))?.status).toBe("cancelled");
    expect(await counted([api!], "cancelled")).toBe(1);
    expect(api!.sent.map((s) => s.event.type)).toEqual(["compaction.failed"]);
    // Its payload went with it, and the conversation's in-flight lock too.
    expect(await api!.stores.payloads.read(jobId, data)).toBeUndefined();
    expect((await lifecycle.submit(newJobId(), submission(jobData({ conversationId: "c1", submissionId: "s2" })), false)).kind).toBe("created");
  });

  it("cancels a job waiting out its retry backoff as one that started: its start kept, its error saying it ran", async () => {
    // A backoff far longer than the test: the job stays delayed until it is cancelled.
    const [api] = processes("lifecycle-cancel-backoff", 1, { COMPACTD_JOB_BACKOFF_MS: "600000" });
    const { lifecycle, compactionQueues } = api!.stores;
    const jobId = newJobId();
    const data = jobData();
    expect((await lifecycle.submit(jobId, submission(data), false)).kind).toBe("created");
    const queue = compactionQueues.of(jobId);
    // A worker takes it and its first attempt fails transiently: it waits to be retried.
    const worker = new Worker(queue.name, null, { connection: queue.opts.connection, prefix: queue.opts.prefix, autorun: false });
    cleanups.push(() => worker.close());
    const taken = (await worker.getNextJob("token"))!;
    await taken.moveToFailed(new Error("summarizer overloaded"), "token");
    expect(await queue.getJobState(jobId)).toBe("delayed");
    const waiting = (await lifecycle.view("acme", jobId))!;
    expect(waiting).toMatchObject({ status: "queued", attempts: 1 });
    expect(waiting.startedAt).not.toBeNull();

    expect(await lifecycle.cancel(jobId)).toBe("removed");

    const cancelled = (await lifecycle.view("acme", jobId))!;
    expect(cancelled).toMatchObject({ status: "cancelled", attempts: 1, startedAt: waiting.startedAt, error: { code: "cancelled" } });
    expect(cancelled.error?.message).not.toMatch(/before it started/);
    const [callback] = api!.sent;
    expect(callback?.event).toMatchObject({ type: "compaction.failed", error: { code: "cancelled", message: cancelled.error?.message } });
  });

  it("cancels a job no worker has taken as one that never started", async () => {
    const [api] = processes("lifecycle-cancel-unstarted", 1);
    const { lifecycle } = api!.stores;
    const jobId = newJobId();
    expect((await lifecycle.submit(jobId, submission(jobData()), false)).kind).toBe("created");
    expect(await lifecycle.cancel(jobId)).toBe("removed");
    expect(await lifecycle.view("acme", jobId)).toMatchObject({
      status: "cancelled",
      attempts: 0,
      startedAt: null,
      error: { code: "cancelled", message: "the compaction was cancelled before it started" },
    });
  });

  it("deletes a job's payload when it settles for good, and not before", async () => {
    const [worker] = processes("lifecycle-payload", 1);
    const { lifecycle, payloads } = worker!.stores;
    const jobId = newJobId();
    const data = jobData();
    expect((await lifecycle.submit(jobId, submission(data), false)).kind).toBe("created");
    expect(await payloads.read(jobId, data)).toBeDefined();

    await lifecycle.settle({ id: jobId, data, timestamp: Date.now() }, { status: "failed", finishedAt: Date.now(), error: { code: "internal_error", message: "boom" } });

    expect(await payloads.read(jobId, data)).toBeUndefined();
  });
});
