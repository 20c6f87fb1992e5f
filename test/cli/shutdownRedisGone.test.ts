/**
 * `compactd serve`, `compactd worker` and `compactd dev` told to stop (SIGTERM) while their
 * Redis is gone: frozen (connections open, nothing answers, as when its host
 * vanished or the network was cut) or killed. Each must still exit, after at
 * most COMPACTD_SHUTDOWN_TIMEOUT_MS per close step rather than when
 * Kubernetes loses patience and SIGKILLs it, and say what it abandoned.
 * Each runs on a redis-server of the test's own (the shared one is never
 * stopped) and on the build (`npm run build` first when run alone).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import { conversation, reactTurn } from "../helpers/conversations.js";
import { startApiProcess } from "../helpers/apiProcess.js";
import { startFakeAnthropic } from "../helpers/fakeAnthropic.js";
import { freePort } from "../helpers/freePort.js";
import { startPrivateRedis, type PrivateRedis } from "../helpers/privateRedis.js";
import { serviceConfig } from "../helpers/serviceConfig.js";
import { waitUntil } from "../helpers/waitUntil.js";
import { startWorkerProcess } from "../helpers/workerProcess.js";
import { cliPath } from "../helpers/runCli.js";
import { repoRoot } from "../helpers/repoRoot.js";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const SHUTDOWN_ENV = { COMPACTD_SHUTDOWN_TIMEOUT_MS: "1000", COMPACTD_LOG_LEVEL: "error" };

async function redisServer(): Promise<PrivateRedis> {
  const redis = await startPrivateRedis();
  cleanups.push(() => redis.stop());
  return redis;
}

function killOnCleanup(child: ChildProcess): void {
  cleanups.push(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  });
}

/**
 * What becomes of Redis before the SIGTERM, and what each process must then
 * say it abandoned: nothing while Redis answers; when it is frozen, the
 * connections left waiting on it; when it is killed, the API nothing (its
 * connections fail fast), a worker whichever steps were still waiting when
 * their connections noticed: which ones depends on the race between the
 * SIGTERM and the reconnection attempts, so only the exit is asserted there.
 */
type Abandoned = RegExp | undefined | "whichever";
const WAYS_TO_LOSE_REDIS: readonly [string, (redis: PrivateRedis) => Promise<void>, Record<"serve" | "worker", Abandoned>][] = [
  ["left running", async () => undefined, { serve: undefined, worker: undefined }],
  ["frozen", async (redis) => redis.freeze(), { serve: /Redis connection/, worker: /Redis connection/ }],
  ["killed", (redis) => redis.stop(), { serve: undefined, worker: "whichever" }],
];

/** The line naming what was abandoned, if `expected`; else that there is none. */
function expectAbandoned(stderr: string, kind: string, expected: Abandoned): void {
  if (expected === "whichever") return;
  const line = new RegExp(`^compactd ${kind}: abandoned at the shutdown deadline \\(COMPACTD_SHUTDOWN_TIMEOUT_MS=1000\\): (.*)$`, "m").exec(stderr);
  if (expected === undefined) expect(line).toBeNull();
  else {
    expect(line?.[1]).toMatch(expected);
    // Only `dev`, running both parts in one process, names the part of each step.
    expect(line?.[1]).not.toMatch(/\b(API|worker): /);
  }
}

describe.each(WAYS_TO_LOSE_REDIS)("with its Redis %s", (_how, loseRedis, abandoned) => {
  it("compactd serve exits 0 on SIGTERM and names what it abandoned, if anything", async () => {
    const redis = await redisServer();
    const config = { ...serviceConfig("shutdown-api"), redisUrl: redis.url };
    const api = await startApiProcess(config, SHUTDOWN_ENV);
    killOnCleanup(api.child);
    await waitUntil(async () => (await fetch(`${api.base}/readyz`)).status === 200, "the API is ready");

    await loseRedis(redis);
    api.child.kill("SIGTERM");

    expect(await api.exited).toBe(0);
    expect(api.stderr()).toMatch(/^compactd serve: shutting down$/m);
    expectAbandoned(api.stderr(), "serve", abandoned.serve);
  }, 60_000);

  it("compactd worker exits 0 on SIGTERM and names what it abandoned, if anything", async () => {
    const redis = await redisServer();
    const fake = await startFakeAnthropic();
    cleanups.push(() => fake.close());
    const config = { ...serviceConfig("shutdown-worker"), redisUrl: redis.url };
    let stderr = "";
    const metricsPort = await freePort();
    const worker = await startWorkerProcess(config, fake, { ...SHUTDOWN_ENV, METRICS_PORT: String(metricsPort) });
    worker.child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    killOnCleanup(worker.child);
    await waitUntil(async () => (await fetch(`http://127.0.0.1:${metricsPort}/readyz`)).status === 200, "the worker is ready");

    await loseRedis(redis);
    worker.child.kill("SIGTERM");

    expect(await worker.exited).toBe(0);
    expect(stderr).toMatch(/^compactd worker: shutting down$/m);
    expectAbandoned(stderr, "worker", abandoned.worker);
  }, 60_000);
});

/**
 * `dev` closes its API, then its worker. Each used to start a deadline of its
 * own, so a shutdown both had to give up on took twice
 * COMPACTD_SHUTDOWN_TIMEOUT_MS, and said what it abandoned in two lines. One
 * deadline covers both: what either abandoned is recorded by it and said in
 * one line. Here the API holds a `?wait` request for a job whose summary
 * never comes, the worker that job, and Redis is frozen.
 */
it("compactd dev with a request and a job in flight exits 0 on SIGTERM, its API and worker closing under one deadline", async () => {
  const redis = await redisServer();
  const fake = await startFakeAnthropic({ script: () => ({ kind: "silent" }) });
  cleanups.push(() => fake.close());
  const port = await freePort();
  const env = { ...process.env, ...SHUTDOWN_ENV, REDIS_URL: redis.url, ANTHROPIC_API_KEY: "sk-test", ANTHROPIC_BASE_URL: fake.url, COMPACTD_API_KEYS: "" };
  const child = spawn(process.execPath, [cliPath, "dev"], { cwd: repoRoot, env: { ...env, PORT: String(port) } });
  killOnCleanup(child);
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on("close", resolve));
  await waitUntil(() => stderr.includes("API and worker on"), "compactd dev has started", 60_000);
  const base = `http://127.0.0.1:${port}`;
  const headers = { authorization: "Bearer dev", "content-type": "application/json" };
  const messages = conversation(...Array.from({ length: 4 }, () => reactTurn({ rounds: 4, toolResultChars: 3_000 })));
  const created = await fetch(`${base}/v1/compactions`, { method: "POST", headers, body: JSON.stringify({ messages, contextWindow: 20_000 }) });
  const { id } = (await created.json()) as { id: string };
  // Sent before the worker has even called the model, so it is held well before the SIGTERM.
  const waiting = fetch(`${base}/v1/compactions/${id}?wait=60`, { headers }).catch(() => undefined);
  await waitUntil(() => fake.requests.length > 0, "the worker is summarizing");

  redis.freeze();
  child.kill("SIGTERM");

  expect(await exited).toBe(0);
  await waiting;
  const lines = stderr.match(/^compactd dev: abandoned at the shutdown deadline \(COMPACTD_SHUTDOWN_TIMEOUT_MS=1000\): .*$/gm) ?? [];
  expect(lines).toHaveLength(1);
  // Both parts close Redis connections of the same names: each step says whose it was.
  const steps = lines[0]!.split("): ")[1]!.split(", ");
  expect(steps.filter((step) => !/^(API|worker): /.test(step))).toEqual([]);
  expect(steps).toContain("API: HTTP requests in flight");
  expect(steps).toContain("worker: compaction workers (their jobs in progress)");
  expect(steps.some((step) => step.startsWith("API: Redis connection"))).toBe(true);
  expect(steps.some((step) => step.startsWith("worker: Redis connection"))).toBe(true);
}, 60_000);
