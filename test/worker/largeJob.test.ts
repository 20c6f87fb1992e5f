/**
 * A 20 MiB compaction on two real worker processes: the worker's CPU work on
 * it (seconds of parsing and preparing that BullMQ's lock-renewal timer cannot
 * interrupt) must not let the job's lock lapse, or the other worker takes the
 * job over and it runs twice. A lock shorter than that work makes the lapse
 * certain without the fix, rather than a matter of how busy the machine is.
 */
import type { ChildProcess } from "node:child_process";
import { afterAll, describe, expect, it } from "vitest";
import { buildApp } from "../../src/api/buildApp.js";
import { startFakeAnthropic } from "../helpers/fakeAnthropic.js";
import { deleteKeysUnder } from "../helpers/redisTestPrefix.js";
import { bearer, serviceConfig } from "../helpers/serviceConfig.js";
import { startWorkerProcess } from "../helpers/workerProcess.js";

const MIB = 1024 * 1024;
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
    // A lock shorter than the CPU work on this job (about a second on an idle
    // core), but longer than any other stretch without a renewal.
    const config = serviceConfig("large-job", {
      COMPACTD_LOCK_DURATION_MS: "600",
      COMPACTD_STALLED_INTERVAL_MS: "150",
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
    let view: Record<string, unknown> = {};
    for (let round = 0; round < 4 && view.status !== "completed"; round++) {
      view = (await app.inject({ method: "GET", url: `/v1/compactions/${id}?wait=60`, headers: bearer("acme") })).json();
    }
    expect(view.status).toBe("completed");
    expect(view.attempts).toBe(1);
  }, 300_000);
});
