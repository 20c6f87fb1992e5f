/**
 * The heavy-input benchmark of issue 8 (`npm run bench:heavy`): what large
 * and adversarial bodies cost the API, measured on `compactd serve` as a
 * child process (the build), on loopback, against the Redis at 6379 under a
 * prefix of its own. No worker runs: jobs only queue, so every figure is the
 * API's.
 *
 * 1. Memory: 50 requests of 20 MiB at once. The API's resident memory is
 *    sampled every 20 ms (peak reported) and `/healthz` is probed every
 *    250 ms from a process of its own, as the kubelet probes it (slowest
 *    answer reported; see healthzProber.ts); the goal is the chart's 1 GiB
 *    limit.
 * 2. Latency: an open loop of ordinary ~100 KB corpus requests in which every
 *    twentieth request (5% of the traffic) is a 10 MB adversarial body (ten
 *    messages of one 1,000,000-character run without whitespace). The
 *    ordinary requests' p50/p99 are reported against the same loop without
 *    the adversarial ones, from the same run.
 *
 * It asserts nothing about speed; the markdown goes to stdout and into the
 * "Heavy input" section of docs/BENCHMARKS.md.
 */
import { loadavg } from "node:os";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { test } from "vitest";
import { longRunBody, ordinaryBody } from "../../test/helpers/heavyBodies.js";
import { deleteKeysUnder } from "../../test/helpers/redisTestPrefix.js";
import { testPrefix } from "../../test/helpers/redisTestPrefix.js";
import { writeGeneratedSection } from "../docSection.js";
import { machine, machineLines } from "../report.js";
import { startHealthzProber } from "./healthzProber.js";
import { rssBytes } from "./procStats.js";
import { BENCH_API_KEY, serviceEnv, startServiceProcess, type ServiceProcess } from "./serviceProcesses.js";
import { corpusWorkloads } from "./workload.js";

const DOC = fileURLToPath(new URL("../../docs/BENCHMARKS.md", import.meta.url));
const COMMAND = "npm run bench:heavy";
const MIB = 1024 * 1024;

const MEMORY = { requests: 50, bodyBytes: 20 * MIB } as const;
const LATENCY = { perSecond: 8, seconds: 12, adversarialEvery: 20, adversarialMessages: 10, runLength: 1_000_000 } as const;
/** A request not answered within this counts as this long (and as unanswered). */
const REQUEST_TIMEOUT_MS = 30_000;
/** How often `/healthz` is probed during the large requests. */
const HEALTHZ_INTERVAL_MS = 250;

const started = performance.now();
function progress(line: string): void {
  process.stderr.write(`bench:heavy ${((performance.now() - started) / 1000).toFixed(0).padStart(4)}s ${line}\n`);
}

interface Answer {
  readonly status: number;
  readonly ms: number;
}

async function post(port: number, body: Buffer | string): Promise<Answer> {
  const begun = performance.now();
  try {
    const response = await fetch(`http://127.0.0.1:${port}/v1/compactions`, {
      method: "POST",
      headers: { authorization: `Bearer ${BENCH_API_KEY}`, "content-type": "application/json" },
      body,
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    await response.arrayBuffer();
    return { status: response.status, ms: performance.now() - begun };
  } catch {
    return { status: 0, ms: performance.now() - begun };
  }
}

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

function counts(answers: readonly Answer[]): string {
  const by = new Map<number, number>();
  for (const { status } of answers) by.set(status, (by.get(status) ?? 0) + 1);
  return [...by.entries()]
    .sort(([a], [b]) => a - b)
    .map(([status, n]) => `${n} × ${status === 0 ? "no answer" : status}`)
    .join(", ");
}

async function withApi<T>(prefix: string, run: (api: ServiceProcess) => Promise<T>): Promise<T> {
  const api = await startServiceProcess("serve", serviceEnv({ queuePrefix: prefix, anthropicBaseUrl: "http://127.0.0.1:9", workerConcurrency: 1 }));
  try {
    return await run(api);
  } finally {
    await api.stop();
    await deleteKeysUnder(prefix);
  }
}

interface MemoryFigures {
  readonly baselineMiB: number;
  readonly peakMiB: number;
  readonly slowestHealthzMs: number;
  readonly answers: string;
  readonly seconds: number;
}

async function measureMemory(): Promise<MemoryFigures> {
  const body = ordinaryBody(MEMORY.bodyBytes);
  return withApi(testPrefix("heavy-memory"), async (api) => {
    await post(api.port, JSON.stringify({ messages: [{ role: "user", content: "warm up" }], contextWindow: 200_000 }));
    const baseline = rssBytes(api.pid);
    let peak = baseline;
    const sampler = setInterval(() => {
      peak = Math.max(peak, rssBytes(api.pid));
    }, 20);
    const prober = await startHealthzProber(api.port, HEALTHZ_INTERVAL_MS, REQUEST_TIMEOUT_MS);
    const begun = performance.now();
    const answers = await Promise.all(Array.from({ length: MEMORY.requests }, () => post(api.port, body)));
    const seconds = (performance.now() - begun) / 1000;
    const slowestHealthz = await prober.stop();
    clearInterval(sampler);
    return { baselineMiB: baseline / MIB, peakMiB: peak / MIB, slowestHealthzMs: slowestHealthz, answers: counts(answers), seconds };
  });
}

interface LatencyFigures {
  readonly ordinary: { p50: number; p99: number; n: number };
  readonly adversarial: string;
}

async function openLoop(withAdversarial: boolean, ordinaryBodies: readonly string[], adversarial: string): Promise<LatencyFigures> {
  return withApi(testPrefix("heavy-latency"), async (api) => {
    const ordinary: Promise<Answer>[] = [];
    const hostile: Promise<Answer>[] = [];
    const total = LATENCY.perSecond * LATENCY.seconds;
    const begun = performance.now();
    for (let i = 0; i < total; i++) {
      const due = begun + (i * 1000) / LATENCY.perSecond;
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, due - performance.now())));
      if (withAdversarial && i % LATENCY.adversarialEvery === LATENCY.adversarialEvery - 1) hostile.push(post(api.port, adversarial));
      else ordinary.push(post(api.port, ordinaryBodies[i % ordinaryBodies.length]!));
    }
    const answered = await Promise.all(ordinary);
    const times = answered.map((answer) => answer.ms);
    return {
      ordinary: { p50: percentile(times, 50), p99: percentile(times, 99), n: times.length },
      adversarial: withAdversarial ? counts(await Promise.all(hostile)) : "—",
    };
  });
}

test("heavy input benchmark", async () => {
  const loadAtStart = loadavg()[0]!;
  const ordinaryBodies = corpusWorkloads(16).map((workload) => JSON.stringify(workload.request));
  const adversarial = longRunBody(LATENCY.adversarialMessages, LATENCY.runLength);

  progress(`memory: ${MEMORY.requests} concurrent requests of ${MEMORY.bodyBytes / MIB} MiB`);
  const memory = await measureMemory();
  progress(`memory: ${JSON.stringify(memory)}`);
  progress(`latency: ${LATENCY.perSecond}/s for ${LATENCY.seconds} s, ordinary only`);
  const calm = await openLoop(false, ordinaryBodies, adversarial);
  progress(`calm: ${JSON.stringify(calm)}`);
  progress(`latency: the same with every ${LATENCY.adversarialEvery}th request a ${(adversarial.length / 1e6).toFixed(0)} MB adversarial body`);
  const hostile = await openLoop(true, ordinaryBodies, adversarial);

  const f = (n: number) => (n >= 100 ? n.toFixed(0) : n.toFixed(1));
  const markdown = [
    machineLines(machine(), COMMAND),
    `- Load average ${loadAtStart.toFixed(2)} at the start, ${loadavg()[0]!.toFixed(2)} at the end (the machine is shared); ${((performance.now() - started) / 1000).toFixed(0)} s in all`,
    "- `compactd serve` (the build) as a child process with the default limits, no worker; Redis 127.0.0.1:6379",
    "",
    `| ${MEMORY.requests} concurrent requests of ${MEMORY.bodyBytes / MIB} MiB (ordinary text) | value | goal |`,
    "|---|---|---|",
    `| API resident memory before / peak, MiB | ${f(memory.baselineMiB)} / **${f(memory.peakMiB)}** | peak under 1024 (the chart's limit) ${memory.peakMiB < 1024 ? "✓" : "✗"} |`,
    `| slowest \`/healthz\` answer meanwhile, ms (probed every 250 ms from a process of its own) | ${f(memory.slowestHealthzMs)} | under 3 s (the chart's liveness timeout) ${memory.slowestHealthzMs < 3000 ? "✓" : "✗"} |`,
    `| answers | ${memory.answers} |  |`,
    `| wall time, s | ${memory.seconds.toFixed(1)} |  |`,
    "",
    `| open loop, ${LATENCY.perSecond} requests/s for ${LATENCY.seconds} s, ordinary ~100 KB corpus requests | ordinary only (anchor) | with 5% adversarial 10 MB bodies | ratio |`,
    "|---|---|---|---|",
    `| ordinary requests' p50 / p99, ms | ${f(calm.ordinary.p50)} / ${f(calm.ordinary.p99)} (n=${calm.ordinary.n}) | ${f(hostile.ordinary.p50)} / **${f(hostile.ordinary.p99)}** (n=${hostile.ordinary.n}) | p99 × ${(hostile.ordinary.p99 / calm.ordinary.p99).toFixed(1)} |`,
    `| adversarial requests' answers (timeout ${REQUEST_TIMEOUT_MS / 1000} s) | — | ${hostile.adversarial} |  |`,
  ].join("\n");
  process.stdout.write(`\n${markdown}\n`);
  writeGeneratedSection(DOC, "heavy", "Heavy input", markdown);
  progress("done");
});
