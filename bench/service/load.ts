/**
 * The two ways the bench offers load, the same for the in-process core and
 * the service.
 *
 * - Closed loop: a fixed number of jobs in flight, a new one started as soon
 *   as one ends. With enough in flight this finds the peak rate.
 * - Open loop: jobs started on a fixed schedule whatever is still running, as
 *   independent agents would. Latency is counted from the scheduled start, so
 *   a bench that falls behind its schedule shows up as latency instead of
 *   quietly offering less load.
 */
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";

/** Runs job `i`; resolves with the `performance.now()` at which it was done. */
export type Job = (i: number) => Promise<number>;

export interface LoadRun {
  readonly wallMs: number;
  /** Per job, in start order. */
  readonly latenciesMs: readonly number[];
  /** Jobs per second over the run. */
  readonly rate: number;
}

export async function closedLoop(count: number, inFlight: number, job: Job): Promise<LoadRun> {
  const latencies = new Array<number>(count);
  let next = 0;
  const started = performance.now();
  const lane = async (): Promise<void> => {
    while (next < count) {
      const i = next++;
      const t0 = performance.now();
      latencies[i] = (await job(i)) - t0;
    }
  };
  await Promise.all(Array.from({ length: Math.min(inFlight, count) }, lane));
  const wallMs = performance.now() - started;
  return { wallMs, latenciesMs: latencies, rate: count / (wallMs / 1000) };
}

export async function openLoop(count: number, ratePerSecond: number, job: Job): Promise<LoadRun> {
  const intervalMs = 1000 / ratePerSecond;
  const latencies = new Array<number>(count);
  const running: Promise<void>[] = [];
  const started = performance.now();
  for (let i = 0; i < count; i++) {
    const scheduled = started + i * intervalMs;
    const wait = scheduled - performance.now();
    if (wait > 1) await sleep(wait);
    running.push(job(i).then((done) => void (latencies[i] = done - scheduled)));
  }
  await Promise.all(running);
  const wallMs = performance.now() - started;
  return { wallMs, latenciesMs: latencies, rate: count / (wallMs / 1000) };
}
