/**
 * The adversarial rows of the core benchmark (issue 8): what counting tokens
 * costs per megabyte on text built to be hard on the tokenizer, against
 * ordinary corpus text in the same loop.
 *
 * Each kind is counted at two sizes: equal milliseconds per megabyte at both
 * show the cost is linear (before the tokenizer was handed bounded pieces, a
 * run eight times longer cost sixty-four times as much). The counter keeps
 * nothing from one call to the next, so no contender is flattered by a cache
 * warmed in an earlier round.
 */
import { countTextTokens } from "../src/core/tokenCounter.js";
import { ADVERSARIAL_KINDS, adversarialText, type AdversarialKind } from "../test/helpers/adversarialText.js";
import { table } from "./report.js";
import { interleavedRuns, median, ratioSpread, type Spread } from "./timing.js";

/** Goal: adversarial text costs at most this many times corpus text per megabyte. */
export const ADVERSARIAL_GOAL = 2;

/** Characters of the smaller and the larger text of each kind. */
const SIZES = [16_000, 128_000] as const;

/** Characters of corpus text each round counts. */
const CORPUS_CHARS = 1_000_000;

/** The seed every kind's text is built from. */
const SEED = 8;

export interface AdversarialRow {
  readonly kind: AdversarialKind;
  /** Milliseconds per megabyte of UTF-8 at each of `SIZES`. */
  readonly msPerMB: readonly [number, number];
  readonly corpusMsPerMB: number;
  /** Larger size's ms/MB over the corpus's, round by round. */
  readonly ratio: Spread;
}

const megabytes = (text: string) => Buffer.byteLength(text, "utf8") / 1e6;

export function measureAdversarial(corpusText: string, runs: number, progress: (line: string) => void): AdversarialRow[] {
  const corpus = corpusText.slice(0, CORPUS_CHARS);
  return ADVERSARIAL_KINDS.map((kind) => {
    progress(`adversarial: ${kind}`);
    const [small, large] = SIZES.map((size) => adversarialText(kind, size, SEED));
    const texts = [corpus, small!, large!];
    const times = interleavedRuns(
      texts.map((text) => () => countTextTokens(text)),
      runs,
    );
    const perMB = times.map((samples, i) => samples.map((ms) => ms / megabytes(texts[i]!)));
    return {
      kind,
      msPerMB: [median(perMB[1]!), median(perMB[2]!)],
      corpusMsPerMB: median(perMB[0]!),
      ratio: ratioSpread(perMB[2]!, perMB[0]!),
    };
  });
}

const int = (n: number) => Math.round(n).toLocaleString("en-US");
const mark = (ok: boolean) => (ok ? "✓" : "✗");
const thousands = (chars: number) => `${chars / 1000}k chars`;

/** The adversarial section of docs/BENCHMARKS.md: how it was measured, the table, the verdict. */
export function adversarialSection(rows: readonly AdversarialRow[], runs: number, maxPieceChars: number): string {
  const body = table(
    [
      "text",
      `ms / MB, ${thousands(SIZES[0])}`,
      `ms / MB, ${thousands(SIZES[1])}`,
      `corpus text ms / MB`,
      `adversarial / corpus at ${thousands(SIZES[1])} (goal ≤ ${ADVERSARIAL_GOAL}×)`,
    ],
    rows.map((r) => [
      r.kind,
      int(r.msPerMB[0]),
      int(r.msPerMB[1]),
      int(r.corpusMsPerMB),
      `**${r.ratio.median.toFixed(2)}** (${r.ratio.low.toFixed(2)}–${r.ratio.high.toFixed(2)}) ${mark(r.ratio.median <= ADVERSARIAL_GOAL)}`,
    ]),
  );
  const costly = rows.filter((r) => r.ratio.median > ADVERSARIAL_GOAL);
  return `How it is measured: each kind of \`test/helpers/adversarialText.ts\` (seed ${SEED}) at ${thousands(SIZES[0])} and ${thousands(SIZES[1])}, and the first ${CORPUS_CHARS.toLocaleString("en-US")} characters of the corpus sessions' priced text, each counted by \`countTextTokens\` (the estimator's tokenizer call, which hands the merge no pre-token longer than ${maxPieceChars} characters). The three run in one loop, a forced GC before each call; medians of ${runs} rounds, per megabyte of UTF-8. The ratio is taken round by round, with its quartiles in brackets.

${body}

Verdict of this run: adversarial text ≤ ${ADVERSARIAL_GOAL}× corpus text per MB on ${rows.length - costly.length} of ${rows.length} kinds${
    costly.length > 0 ? `; missed on ${costly.map((r) => `${r.kind} (${r.ratio.median.toFixed(1)}×)`).join(", ")}.` : "."
  }`;
}
