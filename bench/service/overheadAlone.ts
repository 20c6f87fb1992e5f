/**
 * Only the overhead scenario of the service benchmark (`npm run
 * bench:overhead`): the same conversations compacted by the in-process core
 * and through `compactd serve` + `compactd worker`, closed loops for CPU per
 * job, then open loops at half the service's peak for its own latency, as in
 * `npm run bench:service`, in about a minute instead of two. For trying a
 * change to what the service adds to a job, interleaved with the build before
 * it; it prints its figures and writes no document, so docs/BENCHMARKS.md
 * keeps the figures of whole runs. `BENCH_CPU_PROF_DIR` (serviceProcesses.ts)
 * profiles the service processes.
 */
import { loadavg } from "node:os";
import { test } from "vitest";
import { closeRedisConnection, createRedisConnection } from "../../src/queue/redisConnection.js";
import { TEST_REDIS_URL } from "../../test/helpers/redisTestPrefix.js";
import { OVERHEAD_PLAN, measureOverhead, type RoundRange } from "./overhead.js";
import { corpusWorkloads, SCENARIO_CONVERSATIONS, SMALL_STRETCHES } from "./workload.js";


const range = (r: RoundRange, digits: number, unit = ""): string =>
  `${r.median.toFixed(digits)}${unit} (${r.min.toFixed(digits)}–${r.max.toFixed(digits)})`;

test("what the service adds to a compaction", async () => {
  const loadAtStart = loadavg()[0]!;
  const redis = createRedisConnection(TEST_REDIS_URL, "worker", "bench-overhead");
  try {
    const small = corpusWorkloads(SCENARIO_CONVERSATIONS, SMALL_STRETCHES);
    const o = await measureOverhead(corpusWorkloads(SCENARIO_CONVERSATIONS), small, OVERHEAD_PLAN, redis, (line) => process.stderr.write(`${line}\n`));
    const perProcess = (cpu: Record<string, number>): string =>
      Object.entries(cpu)
        .map(([name, ms]) => `${name} ${ms.toFixed(2)}`)
        .join(", ");
    process.stdout.write(
      [
        `CPU per job, ms: core ${range(o.inProcessPeak.totalCpuMsPerJob, 2)}; service ${range(o.servicePeak.totalCpuMsPerJob, 2)} (${perProcess(o.servicePeak.cpuMsPerJob)})`,
        `added cost: +${range({ median: o.addedCost.median * 100, min: o.addedCost.min * 100, max: o.addedCost.max * 100 }, 0, "%")}, ${range(o.addedMs, 2)} ms a job`,
        `without the fake model's server side (${o.withoutModel.msPerRequest.toFixed(2)} ms a request): core ${range(o.withoutModel.inProcess, 2)}; service ${range(o.withoutModel.service, 2)}; added cost +${range({ median: o.withoutModel.addedCost.median * 100, min: o.withoutModel.addedCost.min * 100, max: o.withoutModel.addedCost.max * 100 }, 0, "%")}`,
        `small conversations (${Math.min(...small.map((w) => w.jsonBytes))}–${Math.max(...small.map((w) => w.jsonBytes))} bytes), CPU per job, ms: core ${range(o.small.inProcessPeak.totalCpuMsPerJob, 2)}; service ${range(o.small.servicePeak.totalCpuMsPerJob, 2)} (${perProcess(o.small.servicePeak.cpuMsPerJob)}); added ${range(o.small.addedMs, 2)} ms a job`,
        `peak jobs/s: core ${range(o.inProcessPeak.rate, 1)}; service ${range(o.servicePeak.rate, 1)}`,
        `open loop at ${o.serviceHalf.offeredRate.toFixed(1)} jobs/s: service p50/p99 ${o.serviceHalf.p50.toFixed(1)}/${o.serviceHalf.p99.toFixed(1)} ms; core ${o.inProcessAtSameRate.p50.toFixed(1)}/${o.inProcessAtSameRate.p99.toFixed(1)} ms; own ${o.ownLatency.p50.toFixed(1)}/${o.ownLatency.p99.toFixed(1)} ms`,
        ...o.stages.map((s) => `  ${s.name}: p50 ${s.p50.toFixed(1)} ms, p99 ${s.p99.toFixed(1)} ms`),
        `load average: ${loadAtStart.toFixed(2)} at the start, ${loadavg()[0]!.toFixed(2)} at the end; not completed normally: ${o.notCompleted}`,
      ].join("\n") + "\n",
    );
  } finally {
    await closeRedisConnection(redis);
  }
});
