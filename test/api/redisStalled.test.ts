/**
 * The API on a Redis that is connected but cannot serve it: stalled, busy
 * with a script, a read-only replica, out of memory. Each runs on a
 * redis-server of the test's own; the shared Redis is never stalled.
 */
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from "fastify";
import { afterEach, describe, expect, it } from "vitest";
import { buildApp } from "../../src/api/buildApp.js";
import { markedRequest } from "../helpers/markedConversation.js";
import { startPrivateRedis, type PrivateRedis } from "../helpers/privateRedis.js";
import { bearer, serviceConfig } from "../helpers/serviceConfig.js";
import { waitUntil } from "../helpers/waitUntil.js";
import { once } from "node:events";
import { createCompactionQueue } from "../../src/queue/compactionQueue.js";
import { closeRedisConnection, createRedisConnection } from "../../src/queue/redisConnection.js";
import { createCallbackQueue, type CallbackJobData } from "../../src/webhooks/callbackQueue.js";
import { testJobData } from "../helpers/jobData.js";

/** Far below how long each fault lasts, far above what answering takes: a liveness bound. */
const ANSWERED_WITHIN_MS = 8_000;

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function redisServer(args: readonly string[] = []): Promise<PrivateRedis> {
  const redis = await startPrivateRedis(args);
  cleanups.push(() => redis.stop());
  return redis;
}

async function apiOn(redis: PrivateRedis): Promise<FastifyInstance> {
  const app = await buildApp({ ...serviceConfig("redis-fault", { COMPACTD_REDIS_COMMAND_TIMEOUT_MS: "500" }), redisUrl: redis.url });
  cleanups.push(() => app.close());
  await waitUntil(async () => (await app.inject({ method: "GET", url: "/readyz" })).statusCode === 200, "the API is ready");
  return app;
}

/** The request's answer and how long it took. */
async function timed(app: FastifyInstance, request: InjectOptions): Promise<{ response: LightMyRequestResponse; ms: number }> {
  const started = Date.now();
  const response = await app.inject(request);
  return { response, ms: Date.now() - started };
}

function submit(app: FastifyInstance): Promise<{ response: LightMyRequestResponse; ms: number }> {
  return timed(app, { method: "POST", url: "/v1/compactions", headers: bearer("acme"), payload: markedRequest("fault") });
}

function expectRetryLater(answer: { response: LightMyRequestResponse; ms: number }): void {
  expect(answer.response.statusCode).toBe(503);
  expect(answer.response.headers["retry-after"]).toBeDefined();
  expect(answer.response.json().error.code).toBe("unavailable");
  expect(answer.ms).toBeLessThan(ANSWERED_WITHIN_MS);
}

describe("an API whose Redis is connected but cannot serve it", () => {
  it("answers 503 with Retry-After, and not ready, while Redis is stalled, instead of waiting for it", async () => {
    const redis = await redisServer();
    const app = await apiOn(redis);
    // Set-up, not the test: on a loaded machine the first submission to a fresh
    // redis-server can outlast the 500 ms command timeout, so ask until it lands.
    let created = await submit(app);
    await waitUntil(async () => {
      if (created.response.statusCode !== 202) created = await submit(app);
      return created.response.statusCode === 202;
    }, "a job is created");
    const id = created.response.json().id as string;

    // Stalls the whole server for 20 s; this connection's answer comes back then.
    void redis.admin().call("DEBUG", "SLEEP", "20").catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 100));

    expectRetryLater(await submit(app));
    expectRetryLater(await timed(app, { method: "GET", url: `/v1/compactions/${id}`, headers: bearer("acme") }));
    const ready = await timed(app, { method: "GET", url: "/readyz" });
    expect(ready.response.statusCode).toBe(503);
    expect(ready.response.json()).toEqual({ status: "unavailable", redis: "timeout" });
    expect(ready.ms).toBeLessThan(ANSWERED_WITHIN_MS);
  });

  it("answers 503 while every client is paused (CLIENT PAUSE)", async () => {
    const redis = await redisServer();
    const app = await apiOn(redis);
    await redis.admin().call("CLIENT", "PAUSE", "20000", "ALL");
    expectRetryLater(await submit(app));
    expect((await app.inject({ method: "GET", url: "/readyz" })).statusCode).toBe(503);
  });

  it("answers 503 while a script holds Redis (BUSY), and is ready again once it is killed", async () => {
    const redis = await redisServer(["--busy-reply-threshold", "50"]);
    const app = await apiOn(redis);
    // Both connections are up before the script starts: a connection that opens while Redis is
    // busy fails its ready check, and ioredis then rejects what it queued with that BUSY reply.
    const scripter = redis.admin();
    const admin = redis.admin();
    await Promise.all([scripter.ping(), admin.ping()]);
    void scripter.eval("while true do end", 0).catch(() => undefined);
    await waitUntil(async () => /BUSY/.test(String(await admin.ping().catch((error: Error) => error.message))), "Redis reports BUSY");

    expectRetryLater(await submit(app));
    const ready = await app.inject({ method: "GET", url: "/readyz" });
    expect(ready.json()).toEqual({ status: "unavailable", redis: "busy" });

    await admin.call("SCRIPT", "KILL");
    await waitUntil(async () => (await app.inject({ method: "GET", url: "/readyz" })).statusCode === 200, "the API is ready again");
    expect((await submit(app)).response.statusCode).toBe(202);
  });

  it("answers 503, and not ready, on a read-only replica", async () => {
    const primary = await redisServer();
    const replica = await redisServer(["--replicaof", "127.0.0.1", String(primary.port)]);
    await waitUntil(async () => /master_link_status:up/.test(await replica.admin().info("replication")), "the replica is in sync");
    const app = await buildApp({ ...serviceConfig("redis-readonly", { COMPACTD_REDIS_COMMAND_TIMEOUT_MS: "500" }), redisUrl: replica.url });
    cleanups.push(() => app.close());

    expectRetryLater(await submit(app));
    const ready = await app.inject({ method: "GET", url: "/readyz" });
    // The API's connection reconnects on READONLY (after a failover the address names the new primary),
    // so the probe may see the write refused, time out, or catch the connection between two attempts.
    expect(ready.statusCode).toBe(503);
    expect(ready.json().status).toBe("unavailable");
  });

  it("answers 503 when Redis is out of memory", async () => {
    const redis = await redisServer();
    const app = await apiOn(redis);
    await redis.admin().config("SET", "maxmemory", "1");
    expectRetryLater(await submit(app));
    expect((await app.inject({ method: "GET", url: "/readyz" })).json()).toEqual({ status: "unavailable", redis: "out_of_memory" });
  });
});

describe("the queues an API builds on a Redis that stalls as they start", () => {
  it("add jobs once Redis answers again, rather than failing every add with the stall's timeout", async () => {
    const redis = await redisServer();
    const config = serviceConfig("stalled-at-start");
    const connection = createRedisConnection(redis.url, "api", config.queuePrefix, 500);
    cleanups.push(() => closeRedisConnection(connection));
    await once(connection, "ready");
    // Every command waits 1.5 s from here, three times the command timeout.
    await redis.admin().call("CLIENT", "PAUSE", "1500", "ALL");
    const compactions = createCompactionQueue(connection, { prefix: config.queuePrefix, attempts: 1, backoffMs: 100, retentionSeconds: 60 });
    const callbacks = createCallbackQueue(connection, config);
    cleanups.push(() => Promise.all([compactions.close(), callbacks.close()]));

    await waitUntil(async () => (await compactions.add("compact", testJobData()).then(() => true, () => false)), "a compaction job is added", 5_000);
    await waitUntil(async () => (await callbacks.add("deliver", callbackData()).then(() => true, () => false)), "a callback job is added", 5_000);
  });
});

function callbackData(): CallbackJobData {
  return { url: "https://hooks.example.com/compactd", webhookId: "msg_1", type: "compaction.failed", body: "{}" };
}

