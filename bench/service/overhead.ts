/**
 * Scenario 1: what the service adds to a compaction.
 *
 * The same ~100 KB conversations are compacted by the core in the bench
 * process and through the service (`compactd serve` and `compactd worker` as
 * child processes, the agent's POST through to the signed callback), both
 * against the same instant summarizer. Three measurements, each repeated over
 * rounds with core and service alternating:
 *
 * - peak: a closed loop with many jobs in flight; jobs per second and the CPU
 *   every process involved spent per job (the bench process holds the fake
 *   summarizer in both, and in the service run the load generator and the
 *   callback receiver too; Redis is counted for the service);
 * - the same peak over conversations of a few KB, whose size-proportional
 *   work is slight: what the service adds to them is, at most, what it adds
 *   to every job whatever its size;
 * - latency at half the service's peak rate: an open loop at that rate, the
 *   service from sending the request to receiving the callback, the core from
 *   starting the job to its result, with the service's time split into stages
 *   by the timestamps BullMQ keeps on each job and the time its outcome was built.
 *
 * Between them, what the fake summarizer costs the bench process per request,
 * measured once by replaying requests at it from another process
 * (modelServerCost.ts), gives the peak's CPU per job without it as well: in
 * production the model runs at its provider, and the same milliseconds in
 * both sides flatter their ratio.
 */
import { performance } from "node:perf_hooks";
import type { Redis } from "ioredis";
import { createCompactor } from "../../src/core/compactor.js";
import { parseConversation } from "../../src/core/formats/parseConversation.js";
import { COMPACTION_QUEUE, serviceKeys } from "../../src/queue/queueNames.js";
import { ResultStore } from "../../src/queue/resultStore.js";
import { createAnthropicSummarizer, DEFAULT_MODEL } from "../../src/summarizers/anthropic.js";
import { deleteKeysUnder, testPrefix } from "../../test/helpers/redisTestPrefix.js";
import { median, quantile } from "../timing.js";
import { createApiClient } from "./apiClient.js";
import { INSTANT, startBenchAnthropic, type BenchAnthropic } from "./benchAnthropic.js";
import { startCallbackClock, type CallbackClock } from "./callbackClock.js";
import { closedLoop, openLoop, type Job } from "./load.js";
import { modelServerMsPerRequest } from "./modelServerCost.js";
import { cpuSnapshot, cpuSpent, machineBusySeconds, type CpuSnapshot } from "./procStats.js";
import { serviceEnv, startServiceProcess, type ServiceProcess } from "./serviceProcesses.js";
import type { Workload } from "./workload.js";

export interface OverheadPlan {
  /**
   * Untimed jobs first: JIT, connection pools, tokenizer caches. Enough for
   * the JIT to settle, since deployed processes run for days: with 48, the
   * worker was still spending about a millisecond a job in V8's optimizing
   * compiler through the timed loops (perf: 12-13% of its CPU; `--trace-opt`:
   * 1.6 s of compiling over its first 300 jobs, 0.45 s over jobs 600-900,
   * 0.16 s over 1,500-1,800), which a long-running process pays once.
   */
  readonly warmUp: number;
  /**
   * Each measurement is repeated, core and service alternating, so that a
   * burst of other work on the shared machine lands on both sides; peaks are
   * reported as medians over rounds, latencies pooled over them.
   */
  readonly rounds: number;
  /** Jobs in each closed loop that finds the peak. */
  readonly peakJobs: number;
  /** Jobs in flight in that loop. */
  readonly inFlight: number;
  /** Length of each open-loop run, in seconds of schedule. */
  readonly openLoopSeconds: number;
  /** The worker's WORKER_CONCURRENCY (the service's default). */
  readonly workerConcurrency: number;
}

/** The plan `npm run bench:service` and `npm run bench:overhead` run. */
export const OVERHEAD_PLAN: OverheadPlan = { warmUp: 1_500, rounds: 3, peakJobs: 300, inFlight: 32, openLoopSeconds: 10, workerConcurrency: 50 };

/** One closed loop. */
export interface PeakRun {
  readonly rate: number;
  /** CPU milliseconds per job, by process. */
  readonly cpuMsPerJob: CpuSnapshot;
  readonly totalCpuMsPerJob: number;
  /** CPU the rest of the machine spent meanwhile (other work sharing the cores), in cores. */
  readonly otherCores: number;
}

/** A value over the rounds: median and range. */
export interface RoundRange {
  readonly median: number;
  readonly min: number;
  readonly max: number;
}

export interface PeakSummary {
  readonly rate: RoundRange;
  readonly totalCpuMsPerJob: RoundRange;
  /** Median per process. */
  readonly cpuMsPerJob: CpuSnapshot;
  /** The most other work seen in any round. */
  readonly otherCores: number;
}

export interface LatencyRun {
  readonly offeredRate: number;
  readonly jobs: number;
  readonly p50: number;
  readonly p99: number;
}

/** One stage of the service's latency, p50 and p99 in milliseconds over the open-loop jobs. */
export interface Stage {
  readonly name: string;
  readonly p50: number;
  readonly p99: number;
}

/** Closed loops of the core and the service over one set of conversations, round by round. */
export interface PeakComparison {
  readonly inProcessPeak: PeakSummary;
  readonly servicePeak: PeakSummary;
  /** Per round: service CPU per job / in-process CPU per job − 1. */
  readonly addedCost: RoundRange;
  /** Per round: service CPU per job − in-process CPU per job, ms. */
  readonly addedMs: RoundRange;
  /** Each round's CPU per job, all processes, ms: the in-process core's and the service's. */
  readonly totalsByRound: { readonly inProcess: readonly number[]; readonly service: readonly number[] };
}

/**
 * The ~100 KB comparison with the fake model's server side taken out of both
 * sides (modelServerCost.ts): in production the model runs at the provider.
 */
export interface WithoutModel {
  /** CPU ms the fake spends answering one summarization request, */
  readonly msPerRequest: number;
  /** over this many replayed ones. */
  readonly replayedRequests: number;
  /** Its CPU per job on each side: msPerRequest × that side's summarization requests per job. */
  readonly msPerJob: { readonly inProcess: number; readonly service: number };
  readonly inProcess: RoundRange;
  readonly service: RoundRange;
  /** Per round, as `addedCost`. */
  readonly addedCost: RoundRange;
}

export interface OverheadResult extends OverheadPlan, PeakComparison {
  /** Per round: service peak / in-process peak. */
  readonly throughputRatio: RoundRange;
  /** The service, open loop at half its median peak, all rounds pooled. */
  readonly serviceHalf: LatencyRun;
  readonly stages: readonly Stage[];
  /** The core, open loop at the same rate, all rounds pooled. */
  readonly inProcessAtSameRate: LatencyRun;
  /**
   * What the service added to each open-loop job: its latency minus the core's
   * median latency for the same conversation at the same rate in the same round.
   */
  readonly ownLatency: { readonly p50: number; readonly p99: number };
  /** Summarization requests per job (a cut inside a turn makes two); the same on both sides when nothing retried. */
  readonly summarizerCallsPerJob: { readonly inProcess: number; readonly service: number };
  readonly withoutModel: WithoutModel;
  /**
   * The same closed loops over conversations of a few KB, whose work in
   * proportion to their size is slight: what the service adds to them is
   * about what it adds to every job, whatever the job's size.
   */
  readonly small: PeakComparison & { readonly workloads: readonly Workload[] };
  /** Jobs whose result was degraded or failed (would mean the fake summarizer misbehaved). */
  readonly notCompleted: number;
}

export async function measureOverhead(
  workloads: readonly Workload[],
  smallWorkloads: readonly Workload[],
  plan: OverheadPlan,
  redis: Redis,
  progress: (line: string) => void,
): Promise<OverheadResult> {
  const redisPid = Number(/process_id:(\d+)/.exec(await redis.info("server"))?.[1]);
  const fake = await startBenchAnthropic(INSTANT);
  const clock = await startCallbackClock();
  const prefix = testPrefix("bench-overhead");
  let api: ServiceProcess | undefined;
  let worker: ServiceProcess | undefined;
  let service: ServiceJob | undefined;
  let smallService: ServiceJob | undefined;
  try {
    const core = inProcessJob(workloads, fake);
    progress("overhead: starting compactd serve + worker");
    const env = serviceEnv({ queuePrefix: prefix, anthropicBaseUrl: fake.url, workerConcurrency: plan.workerConcurrency });
    api = await startServiceProcess("serve", env);
    worker = await startServiceProcess("worker", env);
    service = serviceJob(workloads, api.port, clock);
    const servicePids = { bench: process.pid, api: api.pid, worker: worker.pid, redis: redisPid };

    const peaks = await alternatingPeaks(plan, fake, core.job, service.job, servicePids, "", progress);
    progress("overhead: the fake model's CPU per request, its requests replayed from another process");
    const withoutModel = withoutModelOf(peaks, await modelServerMsPerRequest(fake, MODEL_REPLAY_REQUESTS));
    const smallCore = inProcessJob(smallWorkloads, fake);
    smallService = serviceJob(smallWorkloads, api.port, clock);
    const small = await alternatingPeaks(plan, fake, smallCore.job, smallService.job, servicePids, "small conversations, ", progress);

    const halfRate = peaks.servicePeak.rate.median / 2;
    const halfJobs = Math.round(halfRate * plan.openLoopSeconds);
    service.sent.clear();
    const serviceLatencies: number[] = [];
    const coreLatencies: number[] = [];
    const own: number[] = [];
    for (let round = 1; round <= plan.rounds; round++) {
      progress(`overhead: round ${round}/${plan.rounds}, open loops at ${halfRate.toFixed(1)} jobs/s, service then core`);
      const serviceOpen = await openLoop(halfJobs, halfRate, service.job);
      const coreOpen = await openLoop(halfJobs, halfRate, core.job);
      // Job i compacts workloads[i % n] in both loops.
      const coreMedians = workloads.map((_, w) => median(coreOpen.latenciesMs.filter((_, i) => i % workloads.length === w)));
      serviceLatencies.push(...serviceOpen.latenciesMs);
      coreLatencies.push(...coreOpen.latenciesMs);
      own.push(...serviceOpen.latenciesMs.map((latency, i) => latency - coreMedians[i % workloads.length]!));
    }
    const stages = await stagesOf(redis, prefix, service.sent, clock);

    return {
      ...plan,
      ...peaks,
      withoutModel,
      small: { workloads: smallWorkloads, ...small },
      serviceHalf: latencyRun(halfRate, serviceLatencies),
      stages,
      inProcessAtSameRate: latencyRun(halfRate, coreLatencies),
      ownLatency: { p50: quantile(own, 0.5), p99: quantile(own, 0.99) },
      notCompleted: core.notCompleted() + smallCore.notCompleted() + clock.arrivals.filter((a) => a.degraded || a.failed).length,
    };
  } finally {
    service?.close();
    smallService?.close();
    await Promise.all([api?.stop(), worker?.stop()]);
    await clock.stop();
    await fake.close();
    await deleteKeysUnder(prefix);
  }
}

async function peak(plan: OverheadPlan, job: Job, pids: Record<string, number>): Promise<PeakRun> {
  const before = cpuSnapshot(pids);
  const machineBefore = machineBusySeconds();
  const run = await closedLoop(plan.peakJobs, plan.inFlight, job);
  const spent = cpuSpent(before, cpuSnapshot(pids));
  const ours = Object.values(spent).reduce((a, b) => a + b, 0);
  return {
    rate: run.rate,
    cpuMsPerJob: Object.fromEntries(Object.entries(spent).map(([name, seconds]) => [name, (seconds * 1000) / plan.peakJobs])),
    totalCpuMsPerJob: (ours * 1000) / plan.peakJobs,
    otherCores: (machineBusySeconds() - machineBefore - ours) / (run.wallMs / 1000),
  };
}

/**
 * Both sides warmed up, then a closed loop of each in turn, round after
 * round, compared round by round; `label` names the conversations in the
 * progress lines.
 */
async function alternatingPeaks(
  plan: OverheadPlan,
  fake: BenchAnthropic,
  core: Job,
  service: Job,
  servicePids: Record<string, number>,
  label: string,
  progress: (line: string) => void,
): Promise<PeakComparison & Pick<OverheadResult, "throughputRatio" | "summarizerCallsPerJob">> {
  progress(`overhead: ${label}warming up both`);
  await closedLoop(plan.warmUp, plan.inFlight, core);
  await closedLoop(plan.warmUp, plan.inFlight, service);
  const corePeaks: PeakRun[] = [];
  const servicePeaks: PeakRun[] = [];
  const calls = { inProcess: 0, service: 0 };
  for (let round = 1; round <= plan.rounds; round++) {
    progress(`overhead: ${label}round ${round}/${plan.rounds}, closed loops of ${plan.peakJobs}, core then service`);
    let before = fake.calls();
    corePeaks.push(await peak(plan, core, { bench: process.pid }));
    calls.inProcess += fake.calls() - before;
    before = fake.calls();
    servicePeaks.push(await peak(plan, service, servicePids));
    calls.service += fake.calls() - before;
  }
  const jobs = plan.rounds * plan.peakJobs;
  const totalsByRound = { inProcess: corePeaks.map((p) => p.totalCpuMsPerJob), service: servicePeaks.map((p) => p.totalCpuMsPerJob) };
  return {
    inProcessPeak: summarize(corePeaks),
    servicePeak: summarize(servicePeaks),
    addedCost: addedCostOf(totalsByRound.inProcess, totalsByRound.service),
    addedMs: rangeOf(totalsByRound.service.map((ms, r) => ms - totalsByRound.inProcess[r]!)),
    totalsByRound,
    throughputRatio: rangeOf(servicePeaks.map((p, r) => p.rate / corePeaks[r]!.rate)),
    summarizerCallsPerJob: { inProcess: calls.inProcess / jobs, service: calls.service / jobs },
  };
}

/** Per round: service CPU per job / in-process CPU per job − 1. */
function addedCostOf(inProcess: readonly number[], service: readonly number[]): RoundRange {
  return rangeOf(service.map((ms, r) => ms / inProcess[r]! - 1));
}

/** Requests replayed at the fake to price one (about a second of the bench). */
const MODEL_REPLAY_REQUESTS = 2_000;

/** The closed loops' CPU per job with the fake model's share taken out of each round on both sides. */
function withoutModelOf(peaks: Pick<OverheadResult, "totalsByRound" | "summarizerCallsPerJob">, msPerRequest: number): WithoutModel {
  const msPerJob = {
    inProcess: msPerRequest * peaks.summarizerCallsPerJob.inProcess,
    service: msPerRequest * peaks.summarizerCallsPerJob.service,
  };
  const inProcess = peaks.totalsByRound.inProcess.map((ms) => ms - msPerJob.inProcess);
  const service = peaks.totalsByRound.service.map((ms) => ms - msPerJob.service);
  return { msPerRequest, replayedRequests: MODEL_REPLAY_REQUESTS, msPerJob, inProcess: rangeOf(inProcess), service: rangeOf(service), addedCost: addedCostOf(inProcess, service) };
}

function rangeOf(values: readonly number[]): RoundRange {
  return { median: median(values), min: Math.min(...values), max: Math.max(...values) };
}

function summarize(runs: readonly PeakRun[]): PeakSummary {
  const names = Object.keys(runs[0]!.cpuMsPerJob);
  return {
    rate: rangeOf(runs.map((r) => r.rate)),
    totalCpuMsPerJob: rangeOf(runs.map((r) => r.totalCpuMsPerJob)),
    cpuMsPerJob: Object.fromEntries(names.map((name) => [name, median(runs.map((r) => r.cpuMsPerJob[name]!))])),
    otherCores: Math.max(...runs.map((r) => r.otherCores)),
  };
}

function latencyRun(offeredRate: number, latencies: readonly number[]): LatencyRun {
  return { offeredRate, jobs: latencies.length, p50: quantile(latencies, 0.5), p99: quantile(latencies, 0.99) };
}

/** The core in this process: parse the request's messages, compact, as an agent embedding compactd would. */
function inProcessJob(workloads: readonly Workload[], fake: BenchAnthropic): { job: Job; notCompleted: () => number } {
  // What the worker builds for each job (src/worker/summarizerSource.ts): the same SDK, retries and model.
  const summarizer = createAnthropicSummarizer({ apiKey: "sk-bench", baseURL: fake.url, model: DEFAULT_MODEL, maxRetries: 2 });
  // Each with its request's settings, as the worker builds one for each job.
  const jobs = workloads.map(({ request }) => {
    const compactor = createCompactor({ settings: { contextWindow: request.contextWindow, keepRecentTokens: request.settings.keepRecentTokens }, summarizer });
    if (compactor === null) throw new Error("no compactor: the window or the summarizer is missing");
    return { request, compactor };
  });
  let notCompleted = 0;
  const job: Job = async (i) => {
    const { request, compactor } = jobs[i % jobs.length]!;
    const result = await compactor.compact(parseConversation({ messages: request.messages }), { reason: request.reason });
    if (result.degraded) notCompleted++;
    return performance.now();
  };
  return { job, notCompleted: () => notCompleted };
}

/** When each job was sent, by job id, in epoch milliseconds. */
type SentTimes = Map<string, number>;

export interface ServiceJob {
  readonly job: Job;
  readonly sent: SentTimes;
  close(): void;
}

/** Through the service: serialize, POST, and wait for the job's callback. */
export function serviceJob(workloads: readonly Workload[], port: number, clock: CallbackClock): ServiceJob {
  const api = createApiClient(port);
  const sent: SentTimes = new Map();
  const job: Job = async (i) => {
    const { request } = workloads[i % workloads.length]!;
    const body = JSON.stringify({ ...request, callbackUrl: clock.url });
    const sentAt = performance.timeOrigin + performance.now();
    const id = await api.submit(body);
    sent.set(id, sentAt);
    return (await clock.arrival(id)).at;
  };
  return { job, sent, close: () => api.close() };
}

/**
 * The service's latency in stages, from the times BullMQ records on the job
 * hash: `timestamp` (set by the API when it builds the job, after parsing,
 * `prepare` and compression), `processedOn` (a worker took it) and
 * `finishedOn` (result stored and callback queued). All processes share the
 * machine's clock; BullMQ's times are whole milliseconds.
 */
async function stagesOf(redis: Redis, prefix: string, sent: SentTimes, clock: CallbackClock): Promise<Stage[]> {
  const arrivedAt = new Map(clock.arrivals.map((a) => [a.id, performance.timeOrigin + a.at]));
  const ids = [...sent.keys()];
  const pipeline = redis.pipeline();
  for (const id of ids) pipeline.hmget(`${prefix}:${COMPACTION_QUEUE}:${id}`, "timestamp", "processedOn");
  const rows = (await pipeline.exec()) ?? [];
  // When each result was built: its outcome's finishedAt, stored just before the
  // callback is sent (which may reach the receiver before BullMQ records the job finished).
  const results = new ResultStore(redis, serviceKeys(prefix), 60);
  const outcomes = await Promise.all(ids.map((id) => results.get(id)));
  const spans: Record<string, number[]> = {
    "request sent → job built by the API": [],
    "job built → taken by a worker": [],
    "taken → result built, to be stored and sent": [],
    "result built → callback received": [],
  };
  const [accept, wait, work, deliver] = Object.values(spans) as [number[], number[], number[], number[]];
  ids.forEach((id, k) => {
    const [timestamp, processedOn] = ((rows[k]?.[1] ?? []) as (string | null)[]).map(Number);
    const finishedAt = outcomes[k]?.finishedAt;
    const arrived = arrivedAt.get(id);
    if (!timestamp || !processedOn || finishedAt === undefined || arrived === undefined) return;
    accept.push(timestamp - sent.get(id)!);
    wait.push(processedOn - timestamp);
    work.push(finishedAt - processedOn);
    deliver.push(arrived - finishedAt);
  });
  return Object.entries(spans).map(([name, values]) => ({ name, p50: quantile(values, 0.5), p99: quantile(values, 0.99) }));
}
