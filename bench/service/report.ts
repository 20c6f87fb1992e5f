/**
 * The service benchmark's markdown: every figure next to the anchor it is
 * judged against, both from the same run, and one verdict line per goal of
 * issue 3. Written between markers in docs/BENCHMARKS.md so a rerun replaces
 * the numbers and leaves the Core section and the hand-written reading alone.
 */
import type { Machine } from "../report.js";
import type { ConcurrencyResult } from "./concurrency.js";
import type { JobStepsResult } from "./jobSteps.js";
import type { OverheadResult, RoundRange } from "./overhead.js";
import type { CeilingResult } from "./queueCeiling.js";
import type { RedisBytesResult } from "./redisBytes.js";
import type { Workload } from "./workload.js";

/** The goals of issue 3's "Speed and scale". */
export const GOALS = {
  /** CPU per job through the service over in-process, minus one. */
  addedCost: 0.3,
  /** The service's own p99 latency at half its peak rate, ms. */
  ownP99Ms: 25,
  inFlight: 200,
  jobsPerSecond: 95,
  rssBytes: 512 * 2 ** 20,
  /** Two workers against one. */
  scaling: 2,
  /** Redis bytes per queued job over its raw JSON, for every conversation (issue 11). */
  redisShare: 0.3,
} as const;

export interface RunContext {
  readonly machine: Machine;
  readonly redisVersion: string;
  readonly command: string;
  readonly commit: string;
  /** One-minute load average when the run started and when it ended. */
  readonly load: readonly [number, number];
  readonly seconds: number;
}

export interface ServiceReport {
  readonly context: RunContext;
  readonly workloads: readonly Workload[];
  readonly overhead: OverheadResult;
  readonly steps: JobStepsResult;
  readonly ceiling: CeilingResult;
  readonly one: ConcurrencyResult;
  readonly two: ConcurrencyResult;
  readonly redis: RedisBytesResult;
}

/** Two runs of the same thing on a shared machine differ by a few percent; "doubles" allows that much. */
const SCALING_TOLERANCE = 0.95;

const int = (n: number) => Math.round(n).toLocaleString("en-US");
const num = (n: number, digits = 1) => n.toFixed(digits);
const ms = (n: number) => n.toFixed(n < 10 ? 1 : 0);
const mib = (bytes: number) => `${int(bytes / 2 ** 20)} MiB`;
const pct = (n: number) => `${(n * 100).toFixed(0)}%`;
const signed = (n: number) => `${n >= 0 ? "+" : "−"}${pct(Math.abs(n))}`;
const mark = (ok: boolean) => (ok ? "✓" : "✗");
/** CPU ticks are 10 ms, so a difference of two whole-machine readings is only good to a few hundredths of a core. */
const cores = (n: number) => (Math.abs(n) < 0.05 ? "< 0.05" : num(n, 2));

function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const line = (cells: readonly string[]) => `| ${cells.join(" | ")} |`;
  return [line(header), line(header.map(() => "---")), ...rows.map(line)].join("\n");
}

function contextLines(c: RunContext, workloads: readonly Workload[]): string {
  const sizes = workloads.map((w) => w.jsonBytes);
  return [
    `- Date: ${c.machine.date}; commit ${c.commit}`,
    `- Machine: ${c.machine.cpus} CPUs (\`nproc\`), ${c.machine.cpuModel}, ${c.machine.memoryGiB} GiB RAM; Node ${c.machine.node}; Redis ${c.redisVersion} on 127.0.0.1`,
    `- Command: \`${c.command}\` (builds, then runs every scenario in one process: ${int(c.seconds)} s); load average ${num(c.load[0], 2)} at the start, ${num(c.load[1], 2)} at the end`,
    `- Conversations: ${workloads.length} stretches of ${int(Math.min(...sizes) / 1000)}–${int(Math.max(...sizes) / 1000)} KB of request JSON cut from the corpus's Claude Code and pi sessions (each opens at a prompt, ends with no call unanswered), cycled through in every scenario; \`manual\` compaction, 200k window, keep-recent 8,000 tokens`,
  ].join("\n");
}

/** What the service adds to a job in milliseconds: median and range over rounds. */
function addedMsCell(s: RoundRange): string {
  return `+${num(s.median, 1)} ms (+${num(s.min, 1)} to +${num(s.max, 1)})`;
}

/** The small conversations of the overhead scenario, as its table names them. */
function smallConversations(workloads: readonly Workload[]): string {
  const sizes = workloads.map((w) => w.jsonBytes);
  const keep = workloads[0]?.request.settings.keepRecentTokens ?? 0;
  return `${workloads.length} stretches of ${num(Math.min(...sizes) / 1000)}–${num(Math.max(...sizes) / 1000)} KB (keep-recent ${int(keep)} tokens)`;
}

/** Median with the range over rounds. */
function rangeCell(s: RoundRange, format: (n: number) => string): string {
  return `${format(s.median)} (${format(s.min)}–${format(s.max)})`;
}

function overheadSection(o: OverheadResult, ceiling: CeilingResult): string {
  const core = o.inProcessPeak;
  const service = o.servicePeak;
  const rows = [
    [
      "peak throughput, jobs/s (closed loop)",
      rangeCell(core.rate, (n) => num(n)),
      rangeCell(service.rate, (n) => num(n)),
      `${rangeCell(o.throughputRatio, (n) => num(n, 2))}×`,
      "",
    ],
    [
      "CPU per job, ms, all processes",
      rangeCell(core.totalCpuMsPerJob, ms),
      rangeCell(service.totalCpuMsPerJob, ms),
      `**${signed(o.addedCost.median)}** (${signed(o.addedCost.min)} to ${signed(o.addedCost.max)}); ${addedMsCell(o.addedMs)}`,
      `≤ +${pct(GOALS.addedCost)} ${mark(o.addedCost.median <= GOALS.addedCost)}`,
    ],
    ["· bench process (core + fake LLM / load generator + fake LLM + callback receiver)", ms(core.cpuMsPerJob.bench ?? 0), ms(service.cpuMsPerJob.bench ?? 0), "", ""],
    ["· `compactd serve`", "—", ms(service.cpuMsPerJob.api ?? 0), "", ""],
    ["· `compactd worker`", "—", ms(service.cpuMsPerJob.worker ?? 0), "", ""],
    ["· Redis", "—", ms(service.cpuMsPerJob.redis ?? 0), "", ""],
    [
      `CPU per job, ms, all processes, the fake model's server side taken out (${num(o.withoutModel.msPerRequest, 2)} ms a summarization request, measured by replaying requests at it from another process: ${num(o.withoutModel.msPerJob.inProcess, 2)} ms a job in the core, ${num(o.withoutModel.msPerJob.service, 2)} in the service); a model runs at its provider`,
      rangeCell(o.withoutModel.inProcess, ms),
      rangeCell(o.withoutModel.service, ms),
      `**${signed(o.withoutModel.addedCost.median)}** (${signed(o.withoutModel.addedCost.min)} to ${signed(o.withoutModel.addedCost.max)})`,
      `≤ +${pct(GOALS.addedCost)} ${mark(o.withoutModel.addedCost.median <= GOALS.addedCost)}`,
    ],
    [
      `CPU per job, ms, all processes: ${smallConversations(o.small.workloads)}, the same closed loops`,
      rangeCell(o.small.inProcessPeak.totalCpuMsPerJob, ms),
      `${rangeCell(o.small.servicePeak.totalCpuMsPerJob, ms)}: API ${ms(o.small.servicePeak.cpuMsPerJob.api ?? 0)}, worker ${ms(o.small.servicePeak.cpuMsPerJob.worker ?? 0)}, Redis ${ms(o.small.servicePeak.cpuMsPerJob.redis ?? 0)}`,
      `${signed(o.small.addedCost.median)}; ${addedMsCell(o.small.addedMs)}`,
      "",
    ],
    ["other work on the machine meanwhile, cores, most in any round (not counted above)", cores(core.otherCores), cores(service.otherCores), "", ""],
    [
      `latency p50 / p99, ms, open loop at ${num(o.serviceHalf.offeredRate)} jobs/s (half the service's median peak), ${int(o.serviceHalf.jobs)} jobs`,
      `${ms(o.inProcessAtSameRate.p50)} / ${ms(o.inProcessAtSameRate.p99)}`,
      `${ms(o.serviceHalf.p50)} / ${ms(o.serviceHalf.p99)}`,
      "",
      "",
    ],
    [
      "the service's own latency p50 / p99, ms (each job's latency − the core's median for the same conversation in the same round)",
      "—",
      `${ms(o.ownLatency.p50)} / **${ms(o.ownLatency.p99)}**`,
      "",
      `p99 ≤ ${GOALS.ownP99Ms} ms ${mark(o.ownLatency.p99 <= GOALS.ownP99Ms)}`,
    ],
    [
      `raw BullMQ, no-op processor, same job data (${num(ceiling.jobDataBytes / 1000)} KB) and payload key (${int(ceiling.payloadBytes / 1000)} KB), ${int(ceiling.jobs)} jobs, jobs/s`,
      "—",
      num(ceiling.rate, 0),
      `service peak = ${pct(service.rate.median / ceiling.rate)} of it`,
      "",
    ],
    ["summarization requests per job", num(o.summarizerCallsPerJob.inProcess, 2), num(o.summarizerCallsPerJob.service, 2), "", ""],
  ];
  const stages = table(
    ["stage of a service job (open loops above)", "p50 ms", "p99 ms"],
    o.stages.map((s) => [s.name, ms(s.p50), ms(s.p99)]),
  );
  return [
    `**Overhead.** Instant summarizer: the tests' fake Anthropic API in the bench process, zero delay, reached through the real SDK by both sides (the worker via \`ANTHROPIC_BASE_URL\`, the core via \`createAnthropicSummarizer\` with the same base URL), so the measured path is the production one minus the model. Service: \`compactd serve\` and \`compactd worker\` (WORKER_CONCURRENCY ${o.workerConcurrency}, the default) as child processes; a job runs from the agent serializing and POSTing the request (with a fresh Idempotency-Key, as compactd's client sends) to the signed callback arriving. Core: \`parseConversation\` + \`compact\` in the bench process. After ${int(o.warmUp)} jobs on each side to warm up (the JIT settles, as in a process that has run for a while), ${o.rounds} rounds, core and service alternating: closed loops of ${int(o.peakJobs)} jobs with ${o.inFlight} in flight (median and range over rounds; the ratio is taken round by round), then open loops of ${o.openLoopSeconds} s each (percentiles over all rounds' jobs). CPU is user + system time from \`/proc/<pid>/stat\` over each closed loop, divided by its jobs. The fake model runs in the bench process on both sides; after the closed loops its CPU per request is measured by sending it the first requests it answered again, ${int(o.withoutModel.replayedRequests)} in all, from another process, with the bench otherwise idle, so that a row can give both sides without it.`,
    "",
    table(["measure", "in-process core (anchor)", "service", "service vs core", "goal"], rows),
    "",
    stages,
    "",
    `Jobs that did not complete normally (degraded or failed): ${o.notCompleted}.`,
  ].join("\n");
}

function stepsSection(s: JobStepsResult, o: OverheadResult): string {
  const own = s.steps.filter((step) => !step.where.endsWith("core"));
  const ownMs = own.reduce((sum, step) => sum + step.meanMs, 0);
  const addedMs = o.addedMs.median;
  const allowedMs = GOALS.addedCost * o.inProcessPeak.totalCpuMsPerJob.median;
  return [
    `**A job's steps, one by one.** The service's own code run step by step in the bench process, on each conversation ${s.repetitions} times after a pass to warm up, before any service process starts; the median and the mean over conversations and repetitions of the bench process's CPU time (every thread, V8's helpers included) across each step. Steps of the core run in both modes; the rest are the service's own. The sum below is of the means: the overhead loops count a job's CPU as an average over jobs.`,
    "",
    table(
      ["step", "process", "median CPU ms", "mean CPU ms", "also in the in-process core"],
      s.steps.map((step) => [
        step.name,
        step.where.replace(/ and core$/, ""),
        num(step.medianMs, 2),
        num(step.meanMs, 2),
        step.where.endsWith("core") ? "yes" : "no",
      ]),
    ),
    "",
    `The service's own steps come to ${num(ownMs, 1)} ms per job, computation alone. The overhead loops above measured ${num(addedMs, 1)} ms per job more than the core (all processes); the goal of +${pct(GOALS.addedCost)} allows ${num(allowedMs, 1)}. The difference between the two figures, ${num(addedMs - ownMs, 1)} ms, is transport: HTTP both ways, Redis round trips and BullMQ's scripts, logging, and the collections of two more processes. To a small conversation of the overhead table the service adds ${num(o.small.addedMs.median, 1)} ms, ${pct(o.small.addedMs.median / addedMs)} of the ${num(addedMs, 1)} ms it adds to a ~100 KB one: that much, at most, is what every job costs whatever its size.`,
  ].join("\n");
}

function concurrencySection(one: ConcurrencyResult, two: ConcurrencyResult): string {
  const row = (r: ConcurrencyResult) => {
    const goals = { inFlight: GOALS.inFlight * r.plan.workers, rate: GOALS.jobsPerSecond * r.plan.workers };
    const heap = r.heapSample;
    return [
      `${r.plan.workers} × \`compactd worker\`, WORKER_CONCURRENCY ${r.plan.concurrency}; fed ${int(r.offeredRate)} jobs/s`,
      `${int(r.inFlightMedian)} (lowest ${int(r.inFlightMin)}) ${mark(r.inFlightMedian >= goals.inFlight)}`,
      `**${num(r.rate)}** ${mark(r.rate >= goals.rate)}`,
      num(r.finishedRate),
      `${mib(r.maxRssBytes)} ${mark(r.maxRssBytes < GOALS.rssBytes)}`,
      heap === undefined
        ? "—"
        : `${mib(heap.rssBytes)}: ${mib(heap.heapUsedBytes)} / ${mib(heap.heapTotalBytes)} / ${mib(heap.externalBytes)}`,
      `${num(r.workerCores, 2)} (main thread ${num(r.mainThreadCores, 2)})`,
      ms(r.workerCpuMsPerJob),
      num(r.restCores, 2),
      `${num(r.turnSeconds, 2)} / ${num(r.processorSeconds, 2)} / ${num(r.compactSeconds, 2)} / ${num(r.summarizerSeconds, 2)} / ${num(r.callbackSeconds, 2)}`,
    ];
  };
  const scaling = two.rate / one.rate;
  return [
    `**Concurrency.** Summarizer: the fake Anthropic API streaming each reply over 2 s (21 SSE events, 100 ms apart, on a schedule kept from the stream's start, so the bench process's own lateness does not lengthen the call). The worker processes start on an empty queue; the bench then feeds it evenly at 1.2× what the workers' slots could take at 2 s a job (the API's job data through its schema, parser, intake and submit, without HTTP) for ${one.plan.feedSeconds} s. Jobs in flight (BullMQ's active count, sampled every 250 ms), throughput (callbacks received per second; beside it, the jobs BullMQ marked finished per second, callbacks arrived or not) and CPU are read from ${one.plan.settleSeconds} s after feeding starts (each worker has finished about 1,600 jobs by then, so its JIT has settled, as in a worker that has run for a while) until it stops (${num(one.windowSeconds)} s and ${num(two.windowSeconds)} s); RSS from \`/proc/<pid>/status\` over the whole run, the heap from the worker's own \`/metrics\` (read with every other RSS sample; the column shows the reading taken at the highest RSS among those). A job's turn is jobs in flight / jobs per second; *taken → finished* is the mean of \`finishedOn − processedOn\` of the jobs BullMQ finished in the window; the compactor call, the summarizer call and the callback attempt are the means of \`compactd_job_duration_seconds\`, \`compactd_summarizer_duration_seconds\` and \`compactd_callback_duration_seconds\` over the window (first worker; a first delivery is made while its job holds its slot). The main thread's CPU is \`/proc/<pid>/task/<pid>/stat\`: the event loop, which one core bounds; the rest is V8's helper threads and libuv's pool.`,
    "",
    table(
      [
        "workers",
        `in flight, median (goal ≥ ${GOALS.inFlight} per worker)`,
        `jobs/s (goal ≥ ${GOALS.jobsPerSecond} per worker)`,
        "finished by BullMQ, jobs/s",
        `highest RSS of a worker (goal < ${mib(GOALS.rssBytes)})`,
        "RSS: heap used / heap total / external",
        "worker CPU, cores (busiest main thread)",
        "worker CPU per job, ms",
        "rest of the machine, cores",
        "a job's turn in a slot / taken → finished / compactor call / one summarizer call / one callback attempt, s",
      ],
      [row(one), row(two)],
    ),
    "",
    `Two workers against one: ${num(scaling, 2)}× the jobs per second, ${num(two.inFlightMedian / one.inFlightMedian, 2)}× the jobs in flight (goal ${GOALS.scaling}×, counted as met from ${num(GOALS.scaling * SCALING_TOLERANCE, 1)}×) ${mark(scaling >= GOALS.scaling * SCALING_TOLERANCE)}. Jobs that did not complete normally: ${one.notCompleted + two.notCompleted}.`,
  ].join("\n");
}

function redisSection(r: RedisBytesResult): string {
  return [
    `**Redis bytes per queued job.** ${r.jobs} jobs queued as the API queues them, no worker running.`,
    "",
    table(
      ["measure", "bytes", `share of the request's raw JSON (goal ≤ ${pct(GOALS.redisShare)})`],
      [
        ["request JSON, median (anchor)", int(r.rawBytes), "100%"],
        ["`MEMORY USAGE` of the job hash (job data, BullMQ's fields), median", int(r.hashBytesMedian), ""],
        ["`MEMORY USAGE` of the payload key (compressed conversation, raw bytes), median", int(r.payloadBytesMedian), ""],
        [
          "`MEMORY USAGE` of both, median",
          int(r.jobBytesMedian),
          `**${pct(r.jobRatioMedian)}** ${mark(r.jobRatioMedian <= GOALS.redisShare)} (largest ${pct(r.jobRatioMax)} ${mark(r.jobRatioMax <= GOALS.redisShare)}, ${r.largest})`,
        ],
        [
          "`used_memory` growth per job (hash, payload key, prioritized set, events stream, allocator)",
          int(r.usedMemoryPerJob),
          `${pct(r.usedMemoryRatio)} ${mark(r.usedMemoryRatio <= GOALS.redisShare)}`,
        ],
      ],
    ),
  ].join("\n");
}

export function serviceMarkdown(report: ServiceReport): string {
  return [
    contextLines(report.context, report.workloads),
    "",
    overheadSection(report.overhead, report.ceiling),
    "",
    stepsSection(report.steps, report.overhead),
    "",
    concurrencySection(report.one, report.two),
    "",
    redisSection(report.redis),
  ].join("\n");
}
