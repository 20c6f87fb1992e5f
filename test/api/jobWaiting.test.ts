/**
 * `?wait` without polling: waiting requests cost Redis nothing until their
 * job settles, and each process holds only so many. On a redis-server of the
 * test's own, so its command count is this test's alone.
 */
import type { FastifyInstance } from "fastify";
import { afterEach, describe, expect, it } from "vitest";
import { buildApp } from "../../src/api/buildApp.js";
import type { Config } from "../../src/config.js";
import { runWorker } from "../../src/worker/runWorker.js";
import { startFakeAnthropic } from "../helpers/fakeAnthropic.js";
import { markedRequest } from "../helpers/markedConversation.js";
import { startPrivateRedis, type PrivateRedis } from "../helpers/privateRedis.js";
import { bearer, serviceConfig } from "../helpers/serviceConfig.js";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setUp(env: Record<string, string> = {}): Promise<{ redis: PrivateRedis; app: FastifyInstance; config: Config }> {
  const redis = await startPrivateRedis();
  cleanups.push(() => redis.stop());
  const fake = await startFakeAnthropic();
  cleanups.push(() => fake.close());
  const config = { ...serviceConfig("wait", { ANTHROPIC_API_KEY: "sk-test", ANTHROPIC_BASE_URL: fake.url, ...env }), redisUrl: redis.url };
  const app = await buildApp(config);
  cleanups.push(() => app.close());
  return { redis, app, config };
}

async function commandsProcessed(redis: PrivateRedis, admin = redis.admin()): Promise<number> {
  return Number(/total_commands_processed:(\d+)/.exec(await admin.info("stats"))![1]);
}

function view(app: FastifyInstance, id: string, wait: number) {
  return app.inject({ method: "GET", url: `/v1/compactions/${id}?wait=${wait}`, headers: bearer("acme") });
}

describe("waiting for a job", () => {
  it("costs Redis nothing while the job is queued, and answers every waiter when it finishes", async () => {
    const { redis, app, config } = await setUp();
    const submitted = await app.inject({ method: "POST", url: "/v1/compactions", headers: bearer("acme"), payload: markedRequest("wait") });
    expect(submitted.statusCode).toBe(202);
    const id = submitted.json().id as string;

    const waiting = Array.from({ length: 100 }, () => view(app, id, 30));
    // Every waiter reads the job when it arrives; from then on only the settlement wakes them.
    const admin = redis.admin();
    let before = await commandsProcessed(redis, admin);
    for (let settled = false, rounds = 0; !settled && rounds < 30; rounds++) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      const now = await commandsProcessed(redis, admin);
      settled = now - before < 5;
      before = now;
    }
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const during = (await commandsProcessed(redis, admin)) - before;
    // Polling every half second would be 100 waiters × 4 reads × several commands (over 2,000); what
    // remains is the API's own background work (the queue-size lease and its counts).
    expect(during).toBeLessThan(200);

    const worker = await runWorker(config, { serveMetrics: false, onError: () => undefined });
    cleanups.push(() => worker.close());
    const answers = await Promise.all(waiting);
    expect(answers.every((answer) => answer.json().status === "completed")).toBe(true);
  });

  it("answers at once with the job as it is beyond its waiters cap", async () => {
    const { app } = await setUp({ COMPACTD_MAX_WAITERS: "2" });
    const submitted = await app.inject({ method: "POST", url: "/v1/compactions", headers: bearer("acme"), payload: markedRequest("cap") });
    const id = submitted.json().id as string;
    const held = [view(app, id, 3), view(app, id, 3)];
    await new Promise((resolve) => setTimeout(resolve, 300));
    const started = Date.now();
    const beyond = await view(app, id, 60);
    expect(beyond.json().status).toBe("queued");
    // A generous liveness bound: far below the 60 s the request asked to wait.
    expect(Date.now() - started).toBeLessThan(2_000);
    for (const answer of await Promise.all(held)) expect(answer.json().status).toBe("queued");
  });
});
