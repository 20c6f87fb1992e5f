/**
 * Scenario 2: how many slow compactions worker processes keep in flight.
 *
 * The summarizer takes two seconds per call, so a worker holding `c` jobs can
 * finish at most c / 2 jobs per second, less its own time per job. The bench
 * starts the worker processes, then feeds the queue at a fifth more than all
 * of them could take at that bound, so any shortfall is the workers' and a
 * backlog is always waiting. Jobs are the API's job data (its schema, parser,
 * intake and submit, without HTTP, so the cores go to the workers); callbacks
 * come back to the bench.
 *
 * Arrivals spread evenly over time keep the jobs' two-second cycles out of
 * step, so the callbacks arrive as a stream rather than in waves and a
 * window of a few cycles measures the rate fairly. The window opens once the
 * workers have had time to fill their slots and closes when feeding stops;
 * the jobs still queued then are dropped with the queue prefix, not awaited.
 */
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import type { Redis } from "ioredis";
import { newJobId } from "../../src/queue/compactionJob.js";
import { createCompactionQueue } from "../../src/queue/compactionQueue.js";
import { PayloadStore, submitWithPayload } from "../../src/queue/payloadStore.js";
import { COMPACTION_QUEUE, serviceKeys } from "../../src/queue/queueNames.js";
import { deleteKeysUnder, testPrefix } from "../../test/helpers/redisTestPrefix.js";
import { median } from "../timing.js";
import { startBenchAnthropic, TWO_SECONDS } from "./benchAnthropic.js";
import { startCallbackClock } from "./callbackClock.js";
import { meanBetween, workerMetrics, type WorkerMetrics } from "./workerMetrics.js";
import { cpuSeconds, machineBusySeconds, mainThreadCpuSeconds, rssBytes } from "./procStats.js";
import { newSubmission, submissionFor } from "./queuedJobs.js";
import { serviceEnv, startServiceProcess, type ServiceProcess } from "./serviceProcesses.js";
import type { Workload } from "./workload.js";

export interface ConcurrencyPlan {
  readonly workers: number;
  /** WORKER_CONCURRENCY of each worker. */
  readonly concurrency: number;
  /** How long the queue is fed. */
  readonly feedSeconds: number;
  /** When the measured window opens, counted from the first job fed. */
  readonly settleSeconds: number;
}

export interface ConcurrencyResult {
  readonly plan: ConcurrencyPlan;
  /** Jobs fed per second, over all workers. */
  readonly offeredRate: number;
  /** Callbacks per second in the window. */
  readonly rate: number;
  /** Active jobs (BullMQ's count, all workers) in the window: median and lowest sample. */
  readonly inFlightMedian: number;
  readonly inFlightMin: number;
  /** Highest RSS of any worker process over the whole run, bytes. */
  readonly maxRssBytes: number;
  /** Heap of a worker at the paired RSS and heap reading with the highest RSS. */
  readonly heapSample: { readonly rssBytes: number; readonly heapUsedBytes: number; readonly heapTotalBytes: number; readonly externalBytes: number } | undefined;
  /** CPU of all the workers in the window, in cores (1 = one core busy). */
  readonly workerCores: number;
  /** The busiest worker's main thread (its event loop) in the window, in cores: 1 is the most it can get. */
  readonly mainThreadCores: number;
  /** Worker CPU milliseconds per completed job in the window. */
  readonly workerCpuMsPerJob: number;
  /** The rest of the machine (bench, fake LLM, Redis, anything else) in the window, in cores. */
  readonly restCores: number;
  readonly windowSeconds: number;
  /**
   * Where a job's turn in a slot goes, in seconds, over the window: the whole
   * turn (jobs in flight / jobs per second), the compactor's call, one
   * summarization call and one callback attempt, as the first worker's
   * metrics report them.
   */
  readonly turnSeconds: number;
  /** Mean time from a worker taking a job to BullMQ marking it finished (the whole processor). */
  readonly processorSeconds: number;
  /**
   * Jobs BullMQ marked finished per second in the window, whether or not
   * their callbacks have arrived: against `rate` (callbacks received), it
   * tells compactions that did not keep up from callbacks that did not.
   */
  readonly finishedRate: number;
  readonly compactSeconds: number;
  readonly summarizerSeconds: number;
  readonly callbackSeconds: number;
  readonly notCompleted: number;
}

/**
 * The concurrency goal at its own numbers: 200 jobs in flight per
 * worker. The window opens once each worker has finished about 1,600 jobs,
 * and lasts four and a half summarizer cycles. A worker runs for days, and
 * until then its JIT is still compiling: with the window opening after 500
 * jobs (2.5 cycles), one worker finished 89.3 and 92.4 jobs a second in two
 * runs on a 2-core AMD EPYC VM, 98.1 and 97.3 with it opening at 1,600
 * (see the `warmUp` of overhead.ts for what the compiler costs meanwhile).
 */
export const ONE_WORKER: ConcurrencyPlan = { workers: 1, concurrency: 200, feedSeconds: 26, settleSeconds: 17 };

/** How much more is fed than the workers' slots could take at two seconds a job. */
const OVERFEED = 1.2;
const SUMMARIZER_SECONDS = 2;
const SAMPLE_MS = 250;
/** Read the workers' heap (prom-client's collection is not free) with every this many RSS samples. */
const HEAP_EVERY = 2;

interface Sample {
  readonly at: number;
  readonly active: number;
  readonly workerCpu: number;
  /** Per worker. */
  readonly mainThreadCpu: readonly number[];
  readonly machineCpu: number;
}

export async function measureConcurrency(
  workloads: readonly Workload[],
  plan: ConcurrencyPlan,
  redis: Redis,
  progress: (line: string) => void,
): Promise<ConcurrencyResult> {
  const fake = await startBenchAnthropic(TWO_SECONDS);
  const clock = await startCallbackClock();
  const prefix = testPrefix(`bench-concurrency-${plan.workers}`);
  const queue = createCompactionQueue(redis, { prefix, attempts: 3, backoffMs: 2_000, retentionSeconds: 3_600 });
  const workers: ServiceProcess[] = [];
  try {
    const submissions = await Promise.all(workloads.map((w) => submissionFor(w, clock.url)));
    const payloads = new PayloadStore(redis, serviceKeys(prefix));
    const env = serviceEnv({ queuePrefix: prefix, anthropicBaseUrl: fake.url, workerConcurrency: plan.concurrency });
    progress(`concurrency ×${plan.workers}: starting ${plan.workers} compactd worker(s), WORKER_CONCURRENCY=${plan.concurrency}`);
    workers.push(...(await Promise.all(Array.from({ length: plan.workers }, () => startServiceProcess("worker", env)))));

    const offeredRate = (OVERFEED * plan.workers * plan.concurrency) / SUMMARIZER_SECONDS;
    const jobs = Math.round(offeredRate * plan.feedSeconds);
    progress(`concurrency ×${plan.workers}: feeding ${jobs} jobs at ${offeredRate} jobs/s`);
    const started = performance.now();
    const ids: string[] = [];
    const feeding = feed(jobs, offeredRate, started, (i) => {
      const id = newJobId();
      ids.push(id);
      return submitWithPayload(queue, payloads, id, newSubmission(submissions[i % submissions.length]!), false);
    });

    const samples: Sample[] = [];
    let windowStart: WorkerMetrics | undefined;
    let maxRss = 0;
    let heapSample: ConcurrencyResult["heapSample"];
    const feedEnd = started + plan.feedSeconds * 1000;
    const from = started + plan.settleSeconds * 1000;
    for (let n = 0; performance.now() < feedEnd; n++) {
      const active = await queue.getActiveCount();
      let workerCpu = 0;
      for (const w of workers) {
        const rss = rssBytes(w.pid);
        maxRss = Math.max(maxRss, rss);
        if (n % HEAP_EVERY === 0 && rss > (heapSample?.rssBytes ?? 0)) {
          const { heapUsedBytes, heapTotalBytes, externalBytes } = await workerMetrics(w.metricsPort);
          heapSample = { rssBytes: rss, heapUsedBytes, heapTotalBytes, externalBytes };
        }
        workerCpu += cpuSeconds(w.pid);
      }
      samples.push({
        at: performance.now(),
        active,
        workerCpu,
        mainThreadCpu: workers.map((w) => mainThreadCpuSeconds(w.pid)),
        machineCpu: machineBusySeconds(),
      });
      if (windowStart === undefined && performance.now() >= from) windowStart = await workerMetrics(workers[0]!.metricsPort);
      await sleep(SAMPLE_MS);
    }
    const windowEnd = await workerMetrics(workers[0]!.metricsPort);
    await feeding;

    const inside = samples.filter((s) => s.at >= from);
    if (inside.length < 2) throw new Error("the measured window was too short to sample");
    const first = inside[0]!;
    const last = inside.at(-1)!;
    const seconds = (last.at - first.at) / 1000;
    const done = clock.arrivals.filter((a) => a.at >= first.at && a.at <= last.at).length;
    const rate = done / seconds;
    const workerCpu = last.workerCpu - first.workerCpu;
    const inFlightMedian = median(inside.map((s) => s.active));
    const processed = await processorTimes(redis, `${prefix}:${COMPACTION_QUEUE}`, ids, [first.at, last.at]);
    if (windowStart === undefined) throw new Error("the worker's metrics were not read when the window opened");
    return {
      plan,
      offeredRate,
      rate,
      inFlightMedian,
      inFlightMin: Math.min(...inside.map((s) => s.active)),
      maxRssBytes: maxRss,
      heapSample,
      workerCores: workerCpu / seconds,
      mainThreadCores: Math.max(...workers.map((_, k) => (last.mainThreadCpu[k]! - first.mainThreadCpu[k]!) / seconds)),
      workerCpuMsPerJob: (workerCpu * 1000) / done,
      restCores: (last.machineCpu - first.machineCpu - workerCpu) / seconds,
      windowSeconds: seconds,
      turnSeconds: inFlightMedian / rate,
      processorSeconds: processed.reduce((a, b) => a + b, 0) / Math.max(1, processed.length) / 1000,
      finishedRate: processed.length / seconds,
      compactSeconds: meanBetween(windowStart.compact, windowEnd.compact),
      summarizerSeconds: meanBetween(windowStart.summarizer, windowEnd.summarizer),
      callbackSeconds: meanBetween(windowStart.callback, windowEnd.callback),
      notCompleted: clock.arrivals.filter((a) => a.degraded || a.failed).length,
    };
  } finally {
    await Promise.all(workers.map((w) => w.stop()));
    await queue.close();
    await clock.stop();
    await fake.close();
    await deleteKeysUnder(prefix);
  }
}

/**
 * `finishedOn − processedOn` (ms) of the jobs BullMQ marked finished inside
 * the window (given in this process's `performance.now()`).
 */
async function processorTimes(redis: Redis, keyPrefix: string, ids: readonly string[], [from, to]: readonly [number, number]): Promise<number[]> {
  const pipeline = redis.pipeline();
  for (const id of ids) pipeline.hmget(`${keyPrefix}:${id}`, "processedOn", "finishedOn");
  const rows = (await pipeline.exec()) ?? [];
  const window = [performance.timeOrigin + from, performance.timeOrigin + to] as const;
  return rows.flatMap((row) => {
    const [processedOn, finishedOn] = ((row[1] ?? []) as (string | null)[]).map(Number);
    return processedOn && finishedOn && finishedOn >= window[0] && finishedOn <= window[1] ? [finishedOn - processedOn] : [];
  });
}

/** Adds job `i` at `started + i / rate`, however long earlier adds take. */
async function feed(jobs: number, rate: number, started: number, add: (i: number) => Promise<unknown>): Promise<void> {
  const adding: Promise<unknown>[] = [];
  for (let i = 0; i < jobs; i++) {
    const wait = started + (i * 1000) / rate - performance.now();
    if (wait > 1) await sleep(wait);
    adding.push(add(i));
  }
  await Promise.all(adding);
}
