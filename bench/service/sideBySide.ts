/**
 * Two builds of the service measured at the same time (`BENCH_BASELINE=<a
 * checkout, built> npm run bench:side-by-side`): what a change does to the
 * CPU per job of the API and the worker, and to the service's latency.
 *
 * Why at the same time: the shared 2-core VMs this runs on change speed by
 * a quarter within minutes (the in-process core's CPU per job moved from
 * 6.4 to 10.0 ms between two runs of the overhead scenario ten minutes
 * apart), so runs of two builds one after the other, even interleaved,
 * compare the machine's moments as much as the builds. Here each build runs
 * its own `compactd serve` and `compactd worker` on a queue prefix of its
 * own, the bench sends job i to build i mod 2 in one closed loop (the two
 * see the same conversations, in turn), and every process's CPU is read
 * over the same seconds: whatever the machine does then, it does to both.
 * What it cannot split is what they share, Redis and the bench process
 * (the load generator, the fake LLM, the callback receiver).
 *
 * `BENCH_BASELINE_WORKER_NODE_FLAGS` gives the baseline's worker flags of its
 * own (the other side keeps the chart's, or `BENCH_WORKER_NODE_FLAGS`), so a
 * heap setting is compared the same way: `BENCH_BASELINE=.` and the flags
 * are then the only difference.
 *
 * `BENCH_SIDE_CONVERSATIONS=small` sends the overhead scenario's small
 * conversations instead of the ~100 KB ones, for a change to what every job
 * costs whatever its size, which the large ones' work would drown.
 */
import path from "node:path";
import { test } from "vitest";
import { deleteKeysUnder, testPrefix } from "../../test/helpers/redisTestPrefix.js";
import { median, quantile } from "../timing.js";
import { INSTANT, startBenchAnthropic } from "./benchAnthropic.js";
import { startCallbackClock } from "./callbackClock.js";
import { closedLoop, openLoop, type Job } from "./load.js";
import { OVERHEAD_PLAN, serviceJob, type ServiceJob } from "./overhead.js";
import { cpuSnapshot, cpuSpent } from "./procStats.js";
import { nodeFlagsFrom, serviceEnv, startServiceProcess, WORKER_NODE_FLAGS, type ServiceProcess } from "./serviceProcesses.js";
import { corpusWorkloads, ORDINARY_STRETCHES, SCENARIO_CONVERSATIONS, SMALL_STRETCHES } from "./workload.js";

/** Closed loops to take the medians over (`BENCH_SIDE_ROUNDS`, default 9): more for a change of a few hundred microseconds. */
const ROUNDS = Number(process.env.BENCH_SIDE_ROUNDS ?? 9);
/** Jobs per closed loop, half to each build. */
const PEAK_JOBS = 400;
const OPEN_LOOP_SECONDS = 10;

const SIZES = { ordinary: ORDINARY_STRETCHES, small: SMALL_STRETCHES } as const;

/** The conversations sent (`BENCH_SIDE_CONVERSATIONS`: `ordinary`, the default, or `small`). */
function stretchSize(): (typeof SIZES)[keyof typeof SIZES] {
  const name = process.env.BENCH_SIDE_CONVERSATIONS ?? "ordinary";
  if (!(name in SIZES)) throw new Error(`BENCH_SIDE_CONVERSATIONS must be one of ${Object.keys(SIZES).join(", ")}, not ${name}`);
  return SIZES[name as keyof typeof SIZES];
}

interface Build {
  readonly name: string;
  readonly cli: string;
  readonly workerNodeFlags: readonly string[];
  api?: ServiceProcess;
  worker?: ServiceProcess;
  service?: ServiceJob;
  readonly prefix: string;
}

const fmt = (values: readonly number[], digits = 2): string =>
  `${median(values).toFixed(digits)} (${Math.min(...values).toFixed(digits)} to ${Math.max(...values).toFixed(digits)})`;

test("two builds side by side", async () => {
  const baseline = process.env.BENCH_BASELINE;
  if (baseline === undefined || baseline === "") throw new Error("BENCH_BASELINE must name a built checkout of the build to compare with");
  const builds: Build[] = [
    {
      name: "baseline",
      cli: path.resolve(baseline, "bin/compactd.js"),
      workerNodeFlags: nodeFlagsFrom(process.env.BENCH_BASELINE_WORKER_NODE_FLAGS) ?? WORKER_NODE_FLAGS,
      prefix: testPrefix("bench-side-a"),
    },
    { name: "this build", cli: path.resolve("bin/compactd.js"), workerNodeFlags: WORKER_NODE_FLAGS, prefix: testPrefix("bench-side-b") },
  ];
  const workloads = corpusWorkloads(SCENARIO_CONVERSATIONS, stretchSize());
  const fake = await startBenchAnthropic(INSTANT);
  const clock = await startCallbackClock();
  try {
    for (const build of builds) {
      const env = serviceEnv({ queuePrefix: build.prefix, anthropicBaseUrl: fake.url, workerConcurrency: OVERHEAD_PLAN.workerConcurrency });
      build.api = await startServiceProcess("serve", env, build.cli);
      build.worker = await startServiceProcess("worker", env, build.cli, build.workerNodeFlags);
      build.service = serviceJob(workloads, build.api.port, clock);
    }
    // Job i goes to build i mod 2, with conversation (i div 2): both builds get the same ones.
    const both: Job = (i) => builds[i % 2]!.service!.job(i >> 1);
    const pids = Object.fromEntries(builds.flatMap((b, k) => [[`api${k}`, b.api!.pid], [`worker${k}`, b.worker!.pid]]));
    await closedLoop(OVERHEAD_PLAN.warmUp * 2, OVERHEAD_PLAN.inFlight, both);

    const perJob: Record<string, number[]> = Object.fromEntries(Object.keys(pids).map((name) => [name, []]));
    const rates: number[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      process.stderr.write(`side by side: round ${round}/${ROUNDS}, a closed loop of ${PEAK_JOBS}\n`);
      const before = cpuSnapshot(pids);
      const run = await closedLoop(PEAK_JOBS, OVERHEAD_PLAN.inFlight, both);
      const spent = cpuSpent(before, cpuSnapshot(pids));
      for (const [name, seconds] of Object.entries(spent)) perJob[name]!.push((seconds * 1000) / (PEAK_JOBS / 2));
      rates.push(run.rate);
    }

    // Latency at half the pair's peak, each build taking half of it.
    const rate = median(rates) / 2;
    const latencies: number[][] = [[], []];
    for (let round = 1; round <= 3; round++) {
      process.stderr.write(`side by side: round ${round}/3, an open loop at ${rate.toFixed(1)} jobs/s\n`);
      const open = await openLoop(Math.round(rate * OPEN_LOOP_SECONDS), rate, both);
      open.latenciesMs.forEach((ms, i) => latencies[i % 2]!.push(ms));
    }

    const lines = [`CPU per job, ms, over ${ROUNDS} closed loops of ${PEAK_JOBS} jobs (${PEAK_JOBS / 2} each), median (range):`];
    const totals = builds.map((_, k) => perJob[`api${k}`]!.map((api, r) => api + perJob[`worker${k}`]![r]!));
    builds.forEach((build, k) => {
      lines.push(`  ${build.name.padEnd(10)} api ${fmt(perJob[`api${k}`]!)}, worker ${fmt(perJob[`worker${k}`]!)}, both ${fmt(totals[k]!)}`);
    });
    const diff = (name: string): number[] => perJob[`${name}1`]!.map((b, r) => b - perJob[`${name}0`]![r]!);
    lines.push(`  this build − baseline, round by round: api ${fmt(diff("api"))}, worker ${fmt(diff("worker"))}, both ${fmt(totals[1]!.map((b, r) => b - totals[0]![r]!))}`);
    lines.push(`pair's peak ${fmt(rates, 1)} jobs/s; latency at ${rate.toFixed(1)} jobs/s (request sent → callback received), p50 / p99 ms:`);
    builds.forEach((build, k) => lines.push(`  ${build.name.padEnd(10)} ${quantile(latencies[k]!, 0.5).toFixed(1)} / ${quantile(latencies[k]!, 0.99).toFixed(1)} (${latencies[k]!.length} jobs)`));
    process.stdout.write(`${lines.join("\n")}\n`);
  } finally {
    for (const build of builds) build.service?.close();
    await Promise.all(builds.flatMap((b) => [b.api?.stop(), b.worker?.stop()]));
    await clock.stop();
    await fake.close();
    for (const build of builds) await deleteKeysUnder(build.prefix);
  }
});
