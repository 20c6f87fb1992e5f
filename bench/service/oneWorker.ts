/**
 * Only the one-worker concurrency scenario of the service benchmark
 * (`npm run bench:concurrency`; the two-worker one with
 * `BENCH_CONCURRENCY_WORKERS=2`): one `compactd worker` at WORKER_CONCURRENCY
 * 200 against the two-second fake summarizer, as in `npm run bench:service`,
 * in about 20 s instead of minutes. For trying a change to what a job in
 * flight costs (with `BENCH_WORKER_NODE_FLAGS` for a heap setting, see
 * serviceProcesses.ts); it prints its figures and writes no document, so
 * docs/BENCHMARKS.md keeps the figures of whole runs.
 */
import { loadavg } from "node:os";
import { test } from "vitest";
import { closeRedisConnection, createRedisConnection } from "../../src/queue/redisConnection.js";
import { TEST_REDIS_URL } from "../../test/helpers/redisTestPrefix.js";
import { measureConcurrency, ONE_WORKER } from "./concurrency.js";
import { corpusWorkloads, SCENARIO_CONVERSATIONS } from "./workload.js";


/** `BENCH_CONCURRENCY_WORKERS=2` runs the two-worker scenario of `npm run bench:service` alone instead. */
const PLAN = { ...ONE_WORKER, workers: Number(process.env.BENCH_CONCURRENCY_WORKERS ?? ONE_WORKER.workers) };

const mib = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(0)} MiB`;

test(`${PLAN.workers} worker(s), 200 jobs in flight each`, async () => {
  const loadAtStart = loadavg()[0]!;
  const redis = createRedisConnection(TEST_REDIS_URL, "worker", "bench-concurrency");
  try {
    const r = await measureConcurrency(corpusWorkloads(SCENARIO_CONVERSATIONS), PLAN, redis, (line) => process.stderr.write(`${line}\n`));
    const heap = r.heapSample === undefined ? "not read" : `${mib(r.heapSample.heapUsedBytes)} used / ${mib(r.heapSample.heapTotalBytes)} total / ${mib(r.heapSample.externalBytes)} external at ${mib(r.heapSample.rssBytes)} RSS`;
    process.stdout.write(
      [
        `jobs in flight: median ${r.inFlightMedian}, lowest ${r.inFlightMin}`,
        `jobs/s: ${r.rate.toFixed(1)} (fed ${r.offeredRate}); finished by BullMQ: ${r.finishedRate.toFixed(1)} a second`,
        `highest RSS: ${mib(r.maxRssBytes)}; heap: ${heap}`,
        `worker CPU: ${r.workerCores.toFixed(2)} cores (main thread ${r.mainThreadCores.toFixed(2)}), ${r.workerCpuMsPerJob.toFixed(1)} ms a job; rest of the machine ${r.restCores.toFixed(2)} cores`,
        `a job's turn in a slot ${r.turnSeconds.toFixed(2)} s; taken → finished ${r.processorSeconds.toFixed(2)} s; compactor call ${r.compactSeconds.toFixed(2)} s; one summarizer call ${r.summarizerSeconds.toFixed(2)} s; one callback attempt ${r.callbackSeconds.toFixed(2)} s`,
        `load average: ${loadAtStart.toFixed(2)} at the start, ${loadavg()[0]!.toFixed(2)} at the end; not completed normally: ${r.notCompleted}`,
      ].join("\n") + "\n",
    );
  } finally {
    await closeRedisConnection(redis);
  }
});
