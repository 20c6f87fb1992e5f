/**
 * Medians of interleaved runs.
 *
 * The contenders of one row run alternately inside the same loop, in a
 * rotating order, each after a forced collection, so that a burst of load on
 * the shared machine or a collection left over from the previous contender
 * lands on all of them rather than on one. Ratios are taken round by round
 * (the two calls of a round run back to back) and then their median, which
 * holds up better than a ratio of medians when other processes come and go.
 */
import { performance } from "node:perf_hooks";

const collect: () => void = typeof globalThis.gc === "function" ? globalThis.gc : () => {};

/** The `q` quantile (0..1) of `values`, interpolating between neighbours. */
export function quantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (sorted.length - 1) * q;
  const below = sorted[Math.floor(at)]!;
  const above = sorted[Math.ceil(at)]!;
  return below + (above - below) * (at - Math.floor(at));
}

export function median(values: readonly number[]): number {
  return quantile(values, 0.5);
}

/**
 * Runs each contender once untimed (JIT and tokenizer warm-up), then `runs`
 * timed rounds; returns each contender's times in milliseconds, round by
 * round.
 */
export function interleavedRuns(
  contenders: readonly (() => unknown)[],
  runs: number,
): number[][] {
  for (const run of contenders) run();
  const samples = contenders.map(() => [] as number[]);
  for (let r = 0; r < runs; r++) {
    for (let k = 0; k < contenders.length; k++) {
      const c = (k + r) % contenders.length;
      collect();
      const t0 = performance.now();
      contenders[c]!();
      samples[c]!.push(performance.now() - t0);
    }
  }
  return samples;
}

export interface Spread {
  readonly median: number;
  /** First and third quartile: how much the machine moved the number during the loop. */
  readonly low: number;
  readonly high: number;
}

/** The spread over rounds of `numerator[r] / denominator[r]`. */
export function ratioSpread(numerator: readonly number[], denominator: readonly number[]): Spread {
  const ratios = numerator.map((n, r) => n / denominator[r]!);
  return { median: median(ratios), low: quantile(ratios, 0.25), high: quantile(ratios, 0.75) };
}
