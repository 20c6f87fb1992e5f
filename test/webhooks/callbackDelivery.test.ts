import { randomBytes } from "node:crypto";
import { createServer as createNetServer, type AddressInfo } from "node:net";
import { Redis } from "ioredis";
import { Webhook } from "standardwebhooks";
import { afterEach, describe, expect, it } from "vitest";
import { type Config, loadConfig } from "../../src/config.js";
import { createMetrics, type Metrics } from "../../src/metrics/metrics.js";
import type { WebhookEvent } from "../../src/client/webhookEvents.js";
import { type CallbackQueue, createCallbackQueue, enqueueCallback } from "../../src/webhooks/callbackQueue.js";
import { type CallbackSender, createCallbackSender } from "../../src/webhooks/callbackSender.js";
import { createReceiverSlots } from "../../src/webhooks/receiverSlots.js";
import { createCallbackWorker } from "../../src/webhooks/callbackWorker.js";
import { firstDeliveryNotifier } from "../../src/webhooks/firstDelivery.js";
import type { NotifyCallback } from "../../src/queue/jobLifecycle.js";
import { encodeJson } from "../../src/queue/payloadCodec.js";
import { serviceKeys } from "../../src/queue/queueNames.js";
import { ResultStore, type StoredResult } from "../../src/queue/resultStore.js";
import { createLogger, type Logger } from "../../src/telemetry/logger.js";
import type { ResolveHost } from "../../src/webhooks/resolveHost.js";
import { callbackRetryDelay } from "../../src/webhooks/retrySchedule.js";
import { webhookIdFor } from "../../src/webhooks/signing.js";
import { logLines } from "../helpers/logLines.js";
import { deleteKeysUnder, TEST_REDIS_URL, testPrefix } from "../helpers/redisTestPrefix.js";
import { storedResult } from "../helpers/storedResult.js";
import { waitUntil } from "../helpers/waitUntil.js";
import { startWebhookReceiver, type WebhookReceiver } from "./webhookReceiver.js";

const secret = `whsec_${randomBytes(32).toString("base64")}`;

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const BACKOFF_MS = 50;
const MAX_BACKOFF_MS = 200;

/** The callback age that allows exactly `attempts` attempts on the test's short schedule. */
function ageHoursFor(attempts: number): number {
  const policy = { backoffMs: BACKOFF_MS, maxBackoffMs: MAX_BACKOFF_MS, maxAgeMs: Number.MAX_SAFE_INTEGER };
  let ms = 0;
  for (let made = 1; made < attempts; made++) ms += callbackRetryDelay(made, policy, () => 0);
  return ms / 3_600_000;
}

interface Harness {
  readonly config: Config;
  readonly queue: CallbackQueue;
  readonly metrics: Metrics;
  readonly results: ResultStore;
  /** How a worker settling a job sends its callback: first delivery, then the queue. */
  readonly notify: NotifyCallback;
}

async function harness(
  name: string,
  {
    attempts = 5,
    resolveHost,
    log = createLogger("worker", "silent"),
    ...overrides
  }: Partial<Config> & { attempts?: number; resolveHost?: ResolveHost; log?: Logger } = {},
): Promise<Harness> {
  const config: Config = {
    ...loadConfig({}),
    queuePrefix: testPrefix(name),
    webhookSecret: secret,
    callbackAllow: ["127.0.0.1"],
    callbackBackoffMs: BACKOFF_MS,
    callbackMaxBackoffMs: MAX_BACKOFF_MS,
    callbackMaxAgeHours: ageHoursFor(attempts),
    callbackTimeoutMs: 2_000,
    ...overrides,
  };
  const connection = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
  const queue = createCallbackQueue(connection, config);
  const metrics = createMetrics();
  const results = new ResultStore(connection, serviceKeys(config.queuePrefix), 3600);
  const sender = createCallbackSender({ config, metrics, ...(resolveHost ? { resolveHost } : {}) });
  const { close } = createCallbackWorker({ config, connection, metrics, results, sender, log });
  cleanups.push(async () => {
    await close();
    sender.destroy();
    await queue.close();
    connection.disconnect();
    await deleteKeysUnder(config.queuePrefix);
  });
  return { config, queue, metrics, results, notify: firstDeliveryNotifier(queue, sender, config, log) };
}

async function receiver(respond?: Parameters<typeof startWebhookReceiver>[0]): Promise<WebhookReceiver> {
  const started = await startWebhookReceiver(respond);
  cleanups.push(() => started.stop());
  return started;
}

/**
 * A receiver that keeps a connection open after answering on it, and closes
 * it unanswered when a second request arrives on it: the race of a receiver
 * closing an idle connection just as the sender reuses it, made certain.
 */
async function closingOnReuse(): Promise<{ url: string; readonly answered: number; readonly connections: number }> {
  let answered = 0;
  let connections = 0;
  const server = createNetServer((socket) => {
    connections++;
    let requests = 0;
    let buffered = "";
    socket.on("data", (chunk: Buffer) => {
      buffered += chunk.toString("latin1");
      for (;;) {
        const headEnd = buffered.indexOf("\r\n\r\n");
        if (headEnd < 0) return;
        const length = Number(/content-length: *(\d+)/i.exec(buffered.slice(0, headEnd))?.[1] ?? 0);
        if (buffered.length < headEnd + 4 + length) return;
        buffered = buffered.slice(headEnd + 4 + length);
        if (++requests > 1) {
          socket.destroy();
          return;
        }
        answered++;
        socket.write("HTTP/1.1 204 No Content\r\nConnection: keep-alive\r\n\r\n");
      }
    });
    socket.on("error", () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    get answered() {
      return answered;
    },
    get connections() {
      return connections;
    },
  };
}

function anEvent(id = `cmp_${randomBytes(8).toString("hex")}`): WebhookEvent {
  return {
    type: "compaction.failed",
    id,
    conversationId: "conv-1",
    error: { code: "invalid_conversation", message: "messages[0].role: unknown role", field: "messages[0].role", status: "failed" },
    metadata: { agent: "a1" },
  };
}

async function finalState(queue: CallbackQueue, webhookId: string): Promise<string> {
  let state = "";
  await waitUntil(async () => {
    state = await queue.getJobState(webhookId);
    return state === "completed" || state === "failed";
  }, `callback ${webhookId} finishes`);
  return state;
}

async function count(metrics: Metrics, outcome: string): Promise<number> {
  const values = (await metrics.callbacksTotal.get()).values;
  return values.find((value) => value.labels.outcome === outcome)?.value ?? 0;
}

describe("callback delivery", () => {
  it("posts the event signed so the standardwebhooks package verifies it", async () => {
    const { queue, metrics } = await harness("cb-signed");
    const hook = await receiver();
    const event = anEvent();
    const webhookId = await enqueueCallback(queue, { url: hook.url(), event });

    expect(await finalState(queue, webhookId)).toBe("completed");
    expect(hook.received).toHaveLength(1);
    const [delivery] = hook.received;
    const headers = delivery!.headers as Record<string, string>;
    expect(headers["webhook-id"]).toBe(webhookId);
    expect(headers["content-type"]).toBe("application/json");
    expect(new Webhook(secret).verify(delivery!.body, headers)).toEqual(event);
    expect(() => new Webhook(`whsec_${randomBytes(32).toString("base64")}`).verify(delivery!.body, headers)).toThrow();
    expect(await count(metrics, "delivered")).toBe(1);
    expect((await metrics.callbackDuration.get()).values.find((v) => v.metricName?.endsWith("_count"))?.value).toBe(1);
  });

  it("sends a completed compaction's stored result, read at delivery and signed as stored, holding no copy of it in the queue", async () => {
    const { queue, results } = await harness("cb-completed");
    const hook = await receiver();
    const id = `cmp_${randomBytes(16).toString("hex")}`;
    const result = awkwardResult();
    await results.settleOnce(id, { status: "completed", finishedAt: 1_700_000_000_000, result });
    const webhookId = await enqueueCallback(queue, {
      url: hook.url(),
      event: { type: "compaction.completed", id, conversationId: "conv-1", batchId: "bat_1", metadata: { ticket: 7 } },
    });

    const job = await queue.getJob(webhookId);
    expect(JSON.stringify(job!.data).length).toBeLessThan(400);
    expect(JSON.stringify(job!.data)).not.toContain("the summary");
    expect(await finalState(queue, webhookId)).toBe("completed");
    const [delivery] = hook.received;
    // The exact text: the envelope, then the result as stored, byte for byte.
    expect(delivery!.body).toBe(
      `{"type":"compaction.completed","id":"${id}","conversationId":"conv-1","batchId":"bat_1","metadata":{"ticket":7},"result":${JSON.stringify(result)}}`,
    );
    expect(new Webhook(secret).verify(delivery!.body, delivery!.headers as Record<string, string>)).toEqual({
      type: "compaction.completed",
      id,
      conversationId: "conv-1",
      batchId: "bat_1",
      metadata: { ticket: 7 },
      result,
    });
  });

  it("abandons, without calling anyone, a completed callback whose stored result has expired", async () => {
    const { queue, metrics } = await harness("cb-expired");
    const hook = await receiver();
    const webhookId = await enqueueCallback(queue, {
      url: hook.url(),
      event: { type: "compaction.completed", id: `cmp_${randomBytes(16).toString("hex")}`, conversationId: null, metadata: null },
    });

    expect(await finalState(queue, webhookId)).toBe("failed");
    expect((await queue.getJob(webhookId))!.failedReason).toMatch(/no longer stored/);
    expect(hook.received).toHaveLength(0);
    expect(await count(metrics, "abandoned")).toBe(1);
  });

  it("delivers a callback queued by the previous version, its whole body compressed, as that body", async () => {
    const { queue } = await harness("cb-legacy");
    const hook = await receiver();
    const event = anEvent();
    const webhookId = "msg_legacy";
    await queue.add("deliver", { url: hook.url(), webhookId, type: event.type, payload: encodeJson(JSON.stringify(event)) }, { jobId: webhookId });

    expect(await finalState(queue, webhookId)).toBe("completed");
    expect(hook.received[0]!.body).toBe(JSON.stringify(event));
  });

  it("keeps one webhook-id across retries and signs every attempt so it verifies", async () => {
    const { queue, metrics } = await harness("cb-retries");
    const hook = await receiver((index) => ({ status: index < 2 ? 500 : 200 }));
    const webhookId = await enqueueCallback(queue, { url: hook.url(), event: anEvent() });

    expect(await finalState(queue, webhookId)).toBe("completed");
    expect(hook.received).toHaveLength(3);
    for (const delivery of hook.received) {
      expect(delivery.headers["webhook-id"]).toBe(webhookId);
      expect(() => new Webhook(secret).verify(delivery.body, delivery.headers as Record<string, string>)).not.toThrow();
    }
    expect(await count(metrics, "rejected")).toBe(2);
    expect(await count(metrics, "delivered")).toBe(1);
  });

  it("delivers every callback once a receiver that was down comes back", async () => {
    const { queue, metrics } = await harness("cb-down-up", { attempts: 1_000 });
    const hook = await receiver();
    await hook.stop();
    const ids = await Promise.all(
      Array.from({ length: 5 }, () => enqueueCallback(queue, { url: hook.url(), event: anEvent() })),
    );
    await waitUntil(async () => (await count(metrics, "unreachable")) >= 10, "every callback failed at least twice");

    await hook.start();
    await waitUntil(() => new Set(hook.received.map((r) => r.headers["webhook-id"])).size === 5, "all five arrive");
    for (const id of ids) expect(await finalState(queue, id)).toBe("completed");
    expect(await count(metrics, "abandoned")).toBe(0);
  });

  it("keeps one connection open for successive callbacks to one receiver", async () => {
    const { queue, metrics } = await harness("cb-keep-alive");
    const hook = await receiver();
    for (let i = 0; i < 3; i++) expect(await finalState(queue, await enqueueCallback(queue, { url: hook.url(), event: anEvent() }))).toBe("completed");
    expect(hook.received).toHaveLength(3);
    expect(hook.connections).toBe(1);
    expect(await count(metrics, "delivered")).toBe(3);
  });

  it("sends a callback again on a connection of its own when the receiver closed the kept-open one as it was reused", async () => {
    const { queue, metrics } = await harness("cb-stale-connection");
    const hook = await closingOnReuse();
    for (let i = 0; i < 2; i++) expect(await finalState(queue, await enqueueCallback(queue, { url: hook.url, event: anEvent() }))).toBe("completed");
    // The second callback reached the kept connection, which closed unanswered, then a new one.
    expect(hook.answered).toBe(2);
    expect(hook.connections).toBe(2);
    expect(await count(metrics, "delivered")).toBe(2);
    expect(await count(metrics, "unreachable")).toBe(0);
  });

  it("stops retrying without an error when the receiver answers 410 Gone", async () => {
    const { queue, metrics } = await harness("cb-gone");
    const hook = await receiver(() => ({ status: 410 }));
    const webhookId = await enqueueCallback(queue, { url: hook.url(), event: anEvent() });

    expect(await finalState(queue, webhookId)).toBe("completed");
    expect((await queue.getJob(webhookId))?.returnvalue).toMatchObject({ outcome: "gone" });
    expect(hook.received).toHaveLength(1);
    expect(await count(metrics, "gone")).toBe(1);
    expect(await count(metrics, "abandoned")).toBe(0);
  });

  it("logs a 410 as the receiver refusing the callback, not as delivered, on the first delivery and from the queue", async () => {
    const logs = logLines();
    const { queue, metrics, notify } = await harness("cb-gone-logged", { log: createLogger("worker", "debug", logs.stream) });
    const hook = await receiver(() => ({ status: 410 }));
    const queued = await enqueueCallback(queue, { url: hook.url(), event: anEvent() });
    expect(await finalState(queue, queued)).toBe("completed");
    await notify(hook.url(), anEvent());

    const goneLines = () => logs.lines.filter((line) => line.outcome === "gone");
    await waitUntil(() => goneLines().length === 2, "both 410s are logged");
    expect(hook.received).toHaveLength(2);
    for (const line of goneLines()) {
      expect(line).toMatchObject({ level: "info", msg: "callback refused by its receiver (410 Gone): not sent again", detail: "receiver answered 410 Gone" });
    }
    expect(logs.lines.filter((line) => line.msg === "callback delivered")).toHaveLength(0);
    expect(await count(metrics, "gone")).toBe(2);
    expect(await count(metrics, "delivered")).toBe(0);
  });

  it("logs any other refusing status with its code", async () => {
    const logs = logLines();
    const { queue } = await harness("cb-status-logged", { attempts: 2, log: createLogger("worker", "debug", logs.stream) });
    const hook = await receiver(() => ({ status: 403 }));
    expect(await finalState(queue, await enqueueCallback(queue, { url: hook.url(), event: anEvent() }))).toBe("failed");
    expect(logs.lines.find((line) => line.outcome === "rejected")).toMatchObject({ detail: "receiver answered 403" });
  });

  it("does not follow a redirect and counts it as a failed attempt", async () => {
    const { queue, metrics } = await harness("cb-redirect", { attempts: 2 });
    const elsewhere = await receiver();
    const hook = await receiver(() => ({ status: 302, headers: { location: elsewhere.url("/stolen") } }));
    const webhookId = await enqueueCallback(queue, { url: hook.url(), event: anEvent() });

    expect(await finalState(queue, webhookId)).toBe("failed");
    expect(hook.received).toHaveLength(2);
    expect(elsewhere.received).toHaveLength(0);
    expect((await queue.getJob(webhookId))?.failedReason).toContain("redirects are not followed");
    expect(await count(metrics, "redirected")).toBe(2);
    expect(await count(metrics, "abandoned")).toBe(1);
  });

  it("times out a receiver that never answers and gives up after the last attempt", async () => {
    const { queue, metrics } = await harness("cb-timeout", { attempts: 2, callbackTimeoutMs: 200 });
    const hook = await receiver(() => "hang");
    const webhookId = await enqueueCallback(queue, { url: hook.url(), event: anEvent() });

    expect(await finalState(queue, webhookId)).toBe("failed");
    expect((await queue.getJob(webhookId))?.failedReason).toContain("did not answer within 200 ms");
    expect(await count(metrics, "timeout")).toBe(2);
    expect(await count(metrics, "abandoned")).toBe(1);
  });

  it("refuses at connect time a name that now resolves to a loopback address, and never retries it", async () => {
    const hook = await receiver();
    const rebinding: ResolveHost = async () => [{ address: "127.0.0.1", family: 4 }];
    const { queue, metrics } = await harness("cb-rebind", { callbackAllow: [], resolveHost: rebinding });
    // As if the name had resolved to a public address when the job was submitted.
    const webhookId = await enqueueCallback(queue, { url: `http://rebind.test:${hook.port}/hook`, event: anEvent() });

    expect(await finalState(queue, webhookId)).toBe("failed");
    const job = await queue.getJob(webhookId);
    expect(job?.failedReason).toContain("rebind.test resolves to 127.0.0.1, a loopback address");
    expect(job?.attemptsMade).toBe(1);
    expect(hook.received).toHaveLength(0);
    expect(await count(metrics, "refused")).toBe(1);
    expect(await count(metrics, "abandoned")).toBe(1);
  });

  it("refuses at delivery a literal address the allow-list no longer covers", async () => {
    const hook = await receiver();
    const { queue, metrics } = await harness("cb-literal", { callbackAllow: [] });
    const webhookId = await enqueueCallback(queue, { url: hook.url(), event: anEvent() });

    expect(await finalState(queue, webhookId)).toBe("failed");
    expect((await queue.getJob(webhookId))?.failedReason).toContain("127.0.0.1 is a loopback address");
    expect(hook.received).toHaveLength(0);
    expect(await count(metrics, "refused")).toBe(1);
  });

  it("connects to a host name the allow-list names, wherever it resolves", async () => {
    const hook = await receiver();
    const internal: ResolveHost = async () => [{ address: "127.0.0.1", family: 4 }];
    const { queue } = await harness("cb-allowed-host", { callbackAllow: ["hooks.internal"], resolveHost: internal });
    const webhookId = await enqueueCallback(queue, { url: `http://hooks.internal:${hook.port}/hook`, event: anEvent() });

    expect(await finalState(queue, webhookId)).toBe("completed");
    expect(hook.received).toHaveLength(1);
  });

  it("delivers an event enqueued twice only once", async () => {
    const { queue } = await harness("cb-dedupe");
    const hook = await receiver();
    const event = anEvent();
    const first = await enqueueCallback(queue, { url: hook.url(), event });
    expect(await finalState(queue, first)).toBe("completed");
    const second = await enqueueCallback(queue, { url: hook.url(), event });

    expect(second).toBe(first);
    expect(await queue.getJobCounts("completed", "waiting", "delayed", "active")).toEqual({
      completed: 1,
      waiting: 0,
      delayed: 0,
      active: 0,
    });
    expect(hook.received).toHaveLength(1);
  });

  it("gives distinct events of one job distinct webhook-ids", async () => {
    const { queue } = await harness("cb-ids");
    const hook = await receiver();
    const ids = await Promise.all([
      enqueueCallback(queue, { url: hook.url(), event: anEvent("cmp_a") }),
      enqueueCallback(queue, { url: hook.url(), event: { type: "batch.completed", id: "cmp_a", conversationId: null, result: { counts: {}, items: [] }, metadata: null } }),
      enqueueCallback(queue, { url: hook.url(), event: anEvent("cmp_b") }),
    ]);
    expect(new Set(ids).size).toBe(3);
    await waitUntil(() => hook.received.length === 3, "all three arrive");
  });

  it("fails callbacks for good, without calling anyone, when the worker has no signing secret", async () => {
    const hook = await receiver();
    const { queue, metrics } = await harness("cb-unsigned", { webhookSecret: undefined });
    const webhookId = await enqueueCallback(queue, { url: hook.url(), event: anEvent() });

    expect(await finalState(queue, webhookId)).toBe("failed");
    const job = await queue.getJob(webhookId);
    expect(job?.failedReason).toContain("COMPACTD_WEBHOOK_SECRET is not set");
    expect(job?.attemptsMade).toBe(1);
    expect(hook.received).toHaveLength(0);
    expect(await count(metrics, "abandoned")).toBe(1);
  });
});

describe("a callback's first delivery, by the worker settling its job", () => {
  /** Stores a completed outcome as settling does and returns what settling hands the notifier. */
  async function settled(results: ResultStore, result = awkwardResult()) {
    const id = `cmp_${randomBytes(16).toString("hex")}`;
    const stored = await results.settleOnce(id, { status: "completed", finishedAt: Date.now(), result });
    if (stored === "cancelled") throw new Error("the test job is not cancelled");
    const { resultJson } = stored;
    const notice = { type: "compaction.completed" as const, id, conversationId: "conv-1", metadata: null };
    return { id, notice, resultJson, result, webhookId: webhookIdFor(notice.type, id) };
  }

  it("sends the stored result's text, signed, at once, and queues nothing", async () => {
    const { queue, results, metrics, notify } = await harness("first-delivered");
    const hook = await receiver();
    const { id, notice, resultJson, result, webhookId } = await settled(results);

    await notify(hook.url(), notice, resultJson);

    // Delivered before the notifier returned: no callback job was needed.
    expect(hook.received).toHaveLength(1);
    expect(await queue.getJob(webhookId)).toBeUndefined();
    const [delivery] = hook.received;
    expect(delivery!.headers["webhook-id"]).toBe(webhookId);
    // The same bytes the callback worker would send from the store.
    expect(delivery!.body).toBe(`${JSON.stringify(notice).slice(0, -1)},"result":${await results.resultJson(id)}}`);
    expect(new Webhook(secret).verify(delivery!.body, delivery!.headers as Record<string, string>)).toEqual({ ...notice, result });
    expect(await count(metrics, "delivered")).toBe(1);
  });

  it("queues a callback whose first attempt failed, and the retry sends the same bytes under the same webhook-id", async () => {
    const { queue, results, metrics, notify } = await harness("first-retried");
    const hook = await receiver((index) => ({ status: index === 0 ? 503 : 204 }));
    const { notice, resultJson, webhookId } = await settled(results);

    await notify(hook.url(), notice, resultJson);

    expect(await finalState(queue, webhookId)).toBe("completed");
    expect(hook.received).toHaveLength(2);
    expect(hook.received[1]!.headers["webhook-id"]).toBe(webhookId);
    expect(hook.received[1]!.body).toBe(hook.received[0]!.body);
    expect(await count(metrics, "rejected")).toBe(1);
    expect(await count(metrics, "delivered")).toBe(1);
  });

  it("sends a callback the settling has no result text for (another worker stored the result) to the queue", async () => {
    const { queue, results, notify } = await harness("first-no-text");
    const hook = await receiver();
    const { notice, webhookId } = await settled(results);

    await notify(hook.url(), notice);

    expect(hook.received).toHaveLength(0);
    expect(await finalState(queue, webhookId)).toBe("completed");
    expect(hook.received).toHaveLength(1);
  });

  it("cuts off a first delivery after a second, and tries no other first to that receiver until one answers in time", async () => {
    const { queue, results, metrics, notify } = await harness("first-slow", { attempts: 3 });
    // The first request never gets an answer; later ones, from the queue, do.
    const hook = await receiver((index) => (index === 0 ? "hang" : { status: 204 }));
    const slow = await settled(results);
    const next = await settled(results);

    await notify(hook.url(), slow.notice, slow.resultJson);
    expect(await count(metrics, "timeout")).toBe(1);
    // The receiver is now known slow: the next callback goes to the queue without a first attempt.
    await notify(hook.url(), next.notice, next.resultJson);
    expect(hook.received).toHaveLength(1);
    expect(await queue.getJob(next.webhookId)).toBeDefined();

    expect(await finalState(queue, slow.webhookId)).toBe("completed");
    expect(await finalState(queue, next.webhookId)).toBe("completed");
    expect(hook.received.map((r) => r.headers["webhook-id"]).sort()).toEqual([slow.webhookId, slow.webhookId, next.webhookId].sort());
  });

  it("queues a callback whose first delivery threw, so the callback worker still delivers it", async () => {
    const { config, queue, results } = await harness("first-threw");
    const hook = await receiver();
    const throwing: CallbackSender = {
      slots: createReceiverSlots(config.callbackHostConcurrency, config.callbackTimeoutMs),
      send: () => Promise.reject(new Error("not this time")),
      destroy: () => undefined,
    };
    const notify = firstDeliveryNotifier(queue, throwing, config, createLogger("worker", "silent"));
    const { notice, resultJson, webhookId } = await settled(results);

    await notify(hook.url(), notice, resultJson);

    expect(await finalState(queue, webhookId)).toBe("completed");
    expect(hook.received).toHaveLength(1);
  });

  it("queues at once a callback refused at its first delivery, and the callback worker fails it for good", async () => {
    const { queue, metrics, notify } = await harness("first-refused", { callbackAllow: [] });
    const hook = await receiver();
    const event = anEvent();

    await notify(hook.url(), event);

    expect(await finalState(queue, webhookIdFor(event.type, event.id))).toBe("failed");
    expect(hook.received).toHaveLength(0);
    expect(await count(metrics, "refused")).toBe(2);
    expect(await count(metrics, "abandoned")).toBe(1);
  });
});

/** A result with text a re-serialization could not change but a careless splice would break. */
function awkwardResult(): StoredResult {
  return storedResult({
    messages: [{ role: "user", content: "the summary \u2028 \"quoted\" ünïcödé 🙂" }, { role: "assistant", content: [{ type: "text", text: "kept" }] }],
    reason: "overflow",
  });
}
