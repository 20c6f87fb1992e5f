/**
 * A worker process SIGKILLed in the middle of its jobs, and one SIGKILLed
 * while it makes a callback's first delivery (the job is still its own then,
 * so another worker takes it over and the callback goes out from the
 * queue). Runs the built
 * `compactd worker` (`npm test` builds dist/ first; run `npm run build` before
 * running this file alone).
 */
import type { ChildProcess } from "node:child_process";
import { Redis } from "ioredis";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FastifyInstance } from "fastify";
import { buildApp } from "../../src/api/buildApp.js";
import type { Config } from "../../src/config.js";
import { COMPACTION_QUEUE } from "../../src/queue/queueNames.js";
import { startWebhookReceiver, type WebhookReceiver } from "../webhooks/webhookReceiver.js";
import { startFakeAnthropic, type FakeAnthropic } from "../helpers/fakeAnthropic.js";
import { markedRequest } from "../helpers/markedConversation.js";
import { deleteKeysUnder, TEST_REDIS_URL } from "../helpers/redisTestPrefix.js";
import { bearer, serviceConfig, TEST_WEBHOOK_SECRET } from "../helpers/serviceConfig.js";
import { startWorkerProcess } from "../helpers/workerProcess.js";
import { waitUntil } from "../helpers/waitUntil.js";

const JOBS = 16;
const FIRST_DELIVERY_PATH = "/first-delivery";

let config: Config;
let fake: FakeAnthropic;
let receiver: WebhookReceiver;
let app: FastifyInstance;
const children: ChildProcess[] = [];

beforeAll(async () => {
  // Summaries take about a second, so the kill lands while jobs are in flight.
  fake = await startFakeAnthropic({ script: () => ({ kind: "reply", delayMs: 120 }) });
  // The first request to FIRST_DELIVERY_PATH is never answered: a worker is killed while it waits (the second test).
  let hung = false;
  receiver = await startWebhookReceiver((_index, request) => {
    if (request.path !== FIRST_DELIVERY_PATH || hung) return { status: 204 };
    hung = true;
    return "hang";
  });
  config = serviceConfig("crash", { COMPACTD_CALLBACK_ALLOW: "127.0.0.1" });
  app = await buildApp(config);
});

afterAll(async () => {
  for (const child of children) if (child.exitCode === null) child.kill("SIGKILL");
  await app.close();
  await fake.close();
  await receiver.stop();
  await deleteKeysUnder(config.queuePrefix);
});

describe("a worker process killed mid-jobs", () => {
  it("loses no job: each completes once on another worker and its callback arrives with one stable webhook-id", async () => {
    const doomed = await startWorkerProcess(config, fake, { WORKER_CONCURRENCY: String(JOBS) });
    children.push(doomed.child);
    const ids: string[] = [];
    for (let i = 0; i < JOBS; i++) {
      const response = await app.inject({
        method: "POST",
        url: "/v1/compactions",
        headers: bearer("acme"),
        payload: markedRequest(`crash-${i}`, { conversationId: `conv-${i}`, callbackUrl: receiver.url(`/crash/${i}`) }),
      });
      expect(response.statusCode).toBe(202);
      ids.push(response.json().id);
    }
    await waitUntil(() => fake.requests.length >= JOBS / 2, "the doomed worker is summarizing", 20_000);
    doomed.child.kill("SIGKILL");
    await doomed.exited;

    const survivor = await startWorkerProcess(config, fake, { WORKER_CONCURRENCY: String(JOBS) });
    children.push(survivor.child);
    const attempts: number[] = [];
    for (const id of ids) {
      const view = (await app.inject({ method: "GET", url: `/v1/compactions/${id}?wait=30`, headers: bearer("acme") })).json();
      expect(view.status, id).toBe("completed");
      attempts.push(view.attempts);
    }
    // The kill did land mid-job: some jobs were started twice, once by each worker.
    expect(Math.max(...attempts)).toBeGreaterThanOrEqual(2);

    // Completed exactly once each, according to BullMQ's own event stream. A
    // waiting request is answered once the outcome is stored, a moment before
    // BullMQ records the completion, so the last events may still be on their way.
    const redis = new Redis(TEST_REDIS_URL);
    try {
      const completions = new Map<string, number>();
      const readCompletions = async (): Promise<void> => {
        completions.clear();
        const events = await redis.xrange(`${config.queuePrefix}:${COMPACTION_QUEUE}:events`, "-", "+");
        for (const [, fields] of events) {
          const event = Object.fromEntries(fields.flatMap((_, i) => (i % 2 === 0 ? [[fields[i], fields[i + 1]]] : [])));
          if (event.event === "completed") completions.set(event.jobId!, (completions.get(event.jobId!) ?? 0) + 1);
        }
      };
      await waitUntil(async () => {
        await readCompletions();
        return ids.every((id) => completions.has(id));
      }, "BullMQ records every completion");
      for (const id of ids) expect(completions.get(id), id).toBe(1);
    } finally {
      redis.disconnect();
    }

    await waitUntil(() => ids.every((id) => receiver.received.some((callback) => callback.body.includes(id))), "every callback arrives", 30_000);
    const verifier = new Webhook(TEST_WEBHOOK_SECRET);
    for (const id of ids) {
      const deliveries = receiver.received.filter((callback) => callback.body.includes(`"id":"${id}"`));
      expect(deliveries.length, id).toBeGreaterThanOrEqual(1);
      expect(new Set(deliveries.map((callback) => callback.headers["webhook-id"])).size, id).toBe(1);
      expect(new Set(deliveries.map((callback) => callback.body)).size, id).toBe(1);
      const event = verifier.verify(deliveries[0]!.body, deliveries[0]!.headers as Record<string, string>) as { type: string };
      expect(event.type).toBe("compaction.completed");
    }

    // And the survivor shuts down cleanly on SIGTERM.
    survivor.child.kill("SIGTERM");
    expect(await survivor.exited).toBe(0);
  }, 120_000);
});

describe("a worker killed during a callback's first delivery", () => {
  it("loses no callback: the job is taken over and its callback delivered from the queue, the same bytes under the same webhook-id", async () => {
    const doomed = await startWorkerProcess(config, fake);
    children.push(doomed.child);
    const response = await app.inject({
      method: "POST",
      url: "/v1/compactions",
      headers: bearer("acme"),
      payload: markedRequest("first-delivery-crash", { conversationId: "conv-first-delivery", callbackUrl: receiver.url(FIRST_DELIVERY_PATH) }),
    });
    expect(response.statusCode).toBe(202);
    const { id } = response.json() as { id: string };

    // The first delivery is out (and cut off only after a second): kill the worker now.
    const deliveries = () => receiver.received.filter((callback) => callback.path === FIRST_DELIVERY_PATH);
    await waitUntil(() => deliveries().length === 1, "the first delivery reaches the receiver");
    doomed.child.kill("SIGKILL");
    await doomed.exited;
    const summarizerRequests = fake.requests.length;

    const survivor = await startWorkerProcess(config, fake);
    children.push(survivor.child);
    await waitUntil(() => deliveries().length >= 2, "the callback arrives again, from the worker that took the job over", 30_000);
    const [first, second] = deliveries();
    expect(second!.headers["webhook-id"]).toBe(first!.headers["webhook-id"]);
    expect(second!.body).toBe(first!.body);
    const event = new Webhook(TEST_WEBHOOK_SECRET).verify(second!.body, second!.headers as Record<string, string>) as { type: string; id: string };
    expect(event).toMatchObject({ type: "compaction.completed", id });

    // Summarized once: the worker that took over found the stored outcome and only settled it.
    const view = (await app.inject({ method: "GET", url: `/v1/compactions/${id}?wait=30`, headers: bearer("acme") })).json();
    expect(view.status).toBe("completed");
    expect(view.attempts).toBe(2);
    expect(fake.requests.length).toBe(summarizerRequests);

    survivor.child.kill("SIGTERM");
    expect(await survivor.exited).toBe(0);
  }, 60_000);
});
