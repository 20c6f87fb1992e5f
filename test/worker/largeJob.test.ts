/**
 * A 20 MiB compaction on two real worker processes: the worker's CPU work on
 * it (seconds of parsing and preparing that BullMQ's lock-renewal timer cannot
 * interrupt) must not let the job's lock lapse, or the other worker takes the
 * job over and it runs twice. The worker extends the lock before that work
 * (lockForCpuWork.ts): the test watches the lock's time to live in Redis and
 * sees it go past the lock duration, which only the extension does, then
 * checks that the job ran once. Seeing the extension rather than waiting for
 * a lapse keeps the test certain either way: with a lock shorter than the
 * CPU work, a loaded machine also lapsed it in pauses no extension covers
 * (a full collection of the parsed conversation, while the job waited on
 * the summarizer with its lock renewed to the short duration), so the test
 * failed now and then with the extension in place.
 */
import type { ChildProcess } from "node:child_process";
import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { buildApp } from "../../src/api/buildApp.js";
import { COMPACTION_QUEUE } from "../../src/queue/queueNames.js";
import { startFakeAnthropic } from "../helpers/fakeAnthropic.js";
import { deleteKeysUnder } from "../helpers/redisTestPrefix.js";
import { bearer, serviceConfig } from "../helpers/serviceConfig.js";
import { startWorkerProcess } from "../helpers/workerProcess.js";

const MIB = 1024 * 1024;

/** Longer than a collection's pause on a loaded machine; the extension is many times longer still. */
const LOCK_MS = 2_000;
const children: ChildProcess[] = [];
const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const child of children) if (child.exitCode === null) child.kill("SIGKILL");
  for (const cleanup of cleanups.reverse()) await cleanup();
});

/** ~`bytes` of short agent turns (256 bytes each): the most CPU per byte for the worker. */
function largeConversation(bytes: number): { role: string; content: string }[] {
  const words = "the agent read the file and ran the tests again before it changed the function ";
  const turn = 256;
  return Array.from({ length: Math.floor(bytes / turn) }, (_, i) => ({
    role: i % 2 === 0 ? "user" : "assistant",
    content: `turn ${i}: ${words.repeat(Math.floor((turn - 100) / words.length))}`,
  }));
}

describe("a 20 MiB compaction", () => {
  it("runs once: its lock is renewed throughout, and no other worker takes it over", async () => {
    const fake = await startFakeAnthropic();
    cleanups.push(() => fake.close());
    const config = serviceConfig("large-job", {
      COMPACTD_LOCK_DURATION_MS: String(LOCK_MS),
      COMPACTD_STALLED_INTERVAL_MS: "300",
      COMPACTD_BODY_LIMIT_BYTES: String(21 * MIB),
    });
    const app = await buildApp(config);
    cleanups.push(async () => {
      await app.close();
      await deleteKeysUnder(config.queuePrefix);
    });
    for (let i = 0; i < 2; i++) children.push((await startWorkerProcess(config, fake)).child);

    const submitted = await app.inject({
      method: "POST",
      url: "/v1/compactions",
      headers: bearer("acme"),
      payload: { messages: largeConversation(20 * MIB), contextWindow: 200_000, reason: "manual" },
    });
    expect(submitted.statusCode, submitted.body.slice(0, 300)).toBe(202);
    const id = submitted.json().id as string;
    // The lock's time to live, sampled while the job runs: the test process's loop is not the worker's, so it sees every extension.
    const redis = new Redis(config.redisUrl!);
    cleanups.push(async () => redis.disconnect());
    let longestLockMs = 0;
    let watching = true;
    const watch = (async () => {
      while (watching) {
        longestLockMs = Math.max(longestLockMs, await redis.pttl(`${config.queuePrefix}:${COMPACTION_QUEUE}:${id}:lock`));
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    let view: Record<string, unknown> = {};
    for (let round = 0; round < 4 && view.status !== "completed"; round++) {
      view = (await app.inject({ method: "GET", url: `/v1/compactions/${id}?wait=60`, headers: bearer("acme") })).json();
    }
    watching = false;
    await watch;
    expect(view.status).toBe("completed");
    expect(longestLockMs).toBeGreaterThan(LOCK_MS);
    expect(view.attempts).toBe(1);
  }, 300_000);
});
