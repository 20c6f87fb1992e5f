/**
 * The API's event loop stays free while it takes in heavy bodies, and a
 * SIGTERM during that work still ends the process within its shutdown
 * deadline, leaving nothing half-queued. `compactd serve` runs as a child
 * process (the build) against the test Redis, so its event loop is its own.
 */
import { performance } from "node:perf_hooks";
import { Queue } from "bullmq";
import { afterEach, describe, expect, it } from "vitest";
import type { CompactionJobData } from "../../src/queue/compactionJob.js";
import { storedPayload } from "../helpers/storedJob.js";
import { COMPACTION_QUEUE } from "../../src/queue/queueNames.js";
import { startApiProcess, type ApiProcess } from "../helpers/apiProcess.js";
import { longRunBody, ordinaryBody } from "../helpers/heavyBodies.js";
import { deleteKeysUnder } from "../helpers/redisTestPrefix.js";
import { bearer, serviceConfig } from "../helpers/serviceConfig.js";

const MIB = 1024 * 1024;

/**
 * What a probe may take at most while the API is loaded: a liveness bound
 * (answered at all), not a latency one. A shared machine under load (CI on
 * two cores, load average above 10) answers slowly though the service is
 * fine. So generous a bound cannot by itself catch intake moved back onto
 * the event loop (taken in there, the longest of the bodies below holds the
 * loop for about a second): test/api/intakeThreads.test.ts shows, without a
 * clock, that such bodies never reach the event loop's examination. This
 * catches a loop that stops answering altogether.
 */
const PROBE_BOUND_MS = 20_000;

let api: ApiProcess | undefined;
let prefix = "";
afterEach(async () => {
  if (api !== undefined && api.child.exitCode === null) {
    api.child.kill("SIGKILL");
    await api.exited;
  }
  api = undefined;
  await deleteKeysUnder(prefix);
});

interface Answer {
  readonly status: number;
  readonly body: unknown;
}

async function post(base: string, body: string | Buffer, headers: Record<string, string> = {}): Promise<Answer> {
  try {
    const response = await fetch(`${base}/v1/compactions`, {
      method: "POST",
      headers: { ...bearer("acme"), "content-type": "application/json", ...headers },
      body,
    });
    return { status: response.status, body: await response.json() };
  } catch {
    return { status: 0, body: undefined };
  }
}

/** Probes `/healthz` every 100 ms until stopped; resolves with each probe's time (Infinity when unanswered within the bound). */
function probeHealth(base: string): { stop(): Promise<number[]> } {
  const times: number[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const begun = performance.now();
      try {
        const response = await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(PROBE_BOUND_MS) });
        await response.text();
        times.push(response.ok ? performance.now() - begun : Number.POSITIVE_INFINITY);
      } catch {
        times.push(Number.POSITIVE_INFINITY);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return times;
    },
  };
}

/** The conversation ids of every job queued under the prefix, each job's payload decoded whole. */
async function queuedConversations(config: { redisUrl: string; queuePrefix: string }): Promise<string[]> {
  const queue = new Queue<CompactionJobData>(COMPACTION_QUEUE, { connection: { url: config.redisUrl }, prefix: config.queuePrefix });
  try {
    const jobs = await queue.getJobs(["waiting", "prioritized", "delayed", "active", "completed", "failed"]);
    const ids: string[] = [];
    for (const job of jobs) {
      const payload = (await storedPayload(config, job.id!, job.data)) as { messages: unknown[] };
      expect(payload.messages.length).toBeGreaterThan(0);
      ids.push(job.data.conversationId!);
    }
    return ids.sort();
  } finally {
    await queue.close();
  }
}

describe("compactd serve taking in heavy bodies", () => {
  it("answers every /healthz probe while an 11 MB long-run request and twelve 2 MB ones are processed", async () => {
    const config = serviceConfig("heavy-liveness");
    prefix = config.queuePrefix;
    // A generous deadline: this test is about the event loop, not the deadline.
    api = await startApiProcess(config, { COMPACTD_INTAKE_DEADLINE_MS: "300000" });
    const probes = probeHealth(api.base);
    const answers = await Promise.all([
      post(api.base, longRunBody(11, 1_000_000), { "idempotency-key": "long-run" }),
      ...Array.from({ length: 12 }, (_, i) => post(api!.base, ordinaryBody(2 * MIB), { "idempotency-key": `ordinary-${i}` })),
    ]);
    const times = await probes.stop();
    expect(answers.map((answer) => answer.status)).toEqual(Array.from({ length: 13 }, () => 202));
    expect(times.length).toBeGreaterThan(3);
    expect(Math.max(...times)).toBeLessThan(PROBE_BOUND_MS);
  });

  it("shuts down on SIGTERM within COMPACTD_SHUTDOWN_TIMEOUT_MS while bodies are being taken in, leaving each request queued whole or not at all", async () => {
    const config = serviceConfig("heavy-sigterm");
    prefix = config.queuePrefix;
    const shutdownMs = 5_000;
    api = await startApiProcess(config, {
      COMPACTD_SHUTDOWN_TIMEOUT_MS: String(shutdownMs),
      COMPACTD_INTAKE_DEADLINE_MS: "300000",
      COMPACTD_MAX_INTAKES: "64",
      COMPACTD_MAX_INTAKE_BYTES: String(512 * MIB),
    });
    const running = api;
    // Far more work than the intake threads finish within the shutdown deadline.
    const body = JSON.parse(ordinaryBody(4 * MIB).toString()) as Record<string, unknown>;
    const bodies = Array.from({ length: 24 }, (_, i) => JSON.stringify({ ...body, conversationId: `c-${i}` }));
    const requests = bodies.map((text, i) => post(running.base, text, { "idempotency-key": `k-${i}` }).then((answer) => ({ i, answer })));
    // Once the first request is through, the threads are busy with the rest.
    await Promise.race(requests);
    const signalled = performance.now();
    running.child.kill("SIGTERM");
    await running.exited;
    const tookMs = performance.now() - signalled;
    const answered = await Promise.all(requests);
    expect(tookMs).toBeLessThan(shutdownMs);

    const queued = answered.filter(({ answer }) => answer.status === 202).map(({ i }) => `c-${i}`);
    // Some were abandoned (answered 503 shutting_down, or cut off), and those left nothing behind.
    expect(queued.length).toBeLessThan(requests.length);
    for (const { answer } of answered) {
      if (answer.status === 503) expect((answer.body as { error: { code: string } }).error.code).toBe("shutting_down");
    }
    expect(await queuedConversations(config)).toEqual(queued.sort());
  });
});
