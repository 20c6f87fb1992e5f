/**
 * The core benchmark of issue 2 (`npm run bench:core`): is `prepare` both fast
 * and right?
 *
 * Fast: its median time against the median of one full tokenizer pass over the
 * same conversation, in the same loop, on every corpus session and on built
 * conversations of ~50k, ~200k and ~1M tokens. Right: the kept tail counted
 * exactly against the keep-recent budget, and `tokensBefore` against the exact
 * total. pi's own `prepareCompaction` runs on the pi sessions in the same way.
 *
 * It runs under vitest only because vitest resolves the TypeScript sources and
 * the corpus helpers in place; it asserts nothing about timing. The table goes
 * to stdout and into the Core section of docs/BENCHMARKS.md.
 */
import path from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { test } from "vitest";
import { corpusDir, listCorpusConversations, loadPiSession, piSessionFiles, type CorpusConversation } from "../test/helpers/corpus.js";
import { parseConversation } from "../src/core/formats/parseConversation.js";
import { DEFAULT_KEEP_RECENT_TOKENS, DEFAULT_RESERVE_TOKENS } from "../src/core/settings.js";
import { MAX_PIECE_CHARS } from "../src/core/tokenCounter.js";
import { TokenEstimator } from "../src/core/tokenEstimator.js";
import { writeGeneratedSection } from "./docSection.js";
import { generatedConversation } from "./generated.js";
import {
  batchWorkload,
  exactTokensOf,
  measureAccuracy,
  measureParsed,
  measureRow,
  measureTimings,
  workload,
  type Row,
} from "./measure.js";
import { adversarialSection, measureAdversarial } from "./adversarial.js";
import { piBranch, piKeptTail, piSettings, runPiPrepare } from "./piCompaction.js";
import { conversationText, exactTotal } from "./pricedText.js";
import {
  growthTable,
  machine,
  machineLines,
  mainTable,
  piTable,
  verdicts,
  type GrowthRow,
  type PiRow,
  type TauSummary,
} from "./report.js";
import { interleavedRuns, median, ratioSpread } from "./timing.js";

const COMMAND = "npm run bench:core";
/** What the agents in the corpus ran with. */
const CORPUS_WINDOW = 200_000;
const GENERATED_SIZES = [50_000, 200_000, 1_000_000] as const;
const RUNS = 21;
/** The 1M-token rows: fewer rounds keep the whole run under two minutes. */
const FEW_RUNS = 9;
/** Rounds of the adversarial rows: the slowest kinds take seconds per round. */
const ADVERSARIAL_RUNS = 5;
const DOC = fileURLToPath(new URL("../docs/BENCHMARKS.md", import.meta.url));

const started = performance.now();

function progress(line: string): void {
  process.stderr.write(`bench:core ${((performance.now() - started) / 1000).toFixed(0).padStart(4)}s ${line}\n`);
}

/** Corpus names with session ids cut to their first eight characters. */
function shortName(name: string): string {
  return name.replace(/\b([0-9a-f]{8})-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/g, "$1");
}

/** Brings the JIT and the merge cache to a steady state before anything is recorded. */
function warmUp(conversation: CorpusConversation): void {
  const work = workload(conversation.input, parseConversation(conversation.input), CORPUS_WINDOW);
  interleavedRuns([work.fullPass, work.prepare], 5);
}

function tauSummary(tasks: readonly CorpusConversation[]): TauSummary | undefined {
  const first = tasks[0];
  if (first === undefined) return undefined;
  const parsed = tasks.map((task) => ({ input: task.input, conversation: parseConversation(task.input) }));
  const timings = measureTimings(batchWorkload(parsed.map((p) => workload(p.input, p.conversation, CORPUS_WINDOW))), RUNS);
  const accuracy = parsed.map((p) => ({ messages: p.conversation.messages.length, ...measureAccuracy(p.conversation, CORPUS_WINDOW) }));
  const sum = (f: (a: (typeof accuracy)[number]) => number) => accuracy.reduce((s, a) => s + f(a), 0);
  const cut = accuracy.filter((a) => a.keptTokens !== undefined);
  const errors = cut.map((a) => a.tokensBefore! / a.exactTokens - 1);
  return {
    ...timings,
    name: first.name.replace(/#\d+$/, ""),
    tasks: tasks.length,
    messages: sum((a) => a.messages),
    exactTokens: sum((a) => a.exactTokens),
    largestTokens: Math.max(...accuracy.map((a) => a.exactTokens)),
    windowTokens: CORPUS_WINDOW,
    keepBudget: accuracy[0]!.keepBudget,
    tokenizedShare: sum((a) => a.tokenizedShare * a.exactTokens) / sum((a) => a.exactTokens),
    cut: cut.length,
    keptOverBudget: cut.filter((a) => a.keptTokens! > a.keepBudget).length,
    largestTotalError: errors.reduce((worst, e) => (Math.abs(e) > Math.abs(worst) ? e : worst), 0),
  };
}

/** Two rows per size: the window the conversation has just crossed, and the corpus window. */
function generatedRows(): { rows: Row[]; growth: GrowthRow[] } {
  const rows: Row[] = [];
  const growth: GrowthRow[] = [];
  for (const size of GENERATED_SIZES) {
    const input = generatedConversation(size);
    const name = `generated ~${size >= 1_000_000 ? `${size / 1_000_000}M` : `${size / 1000}k`}`;
    const conversation = parseConversation(input);
    const exact = exactTotal(conversation, new TokenEstimator());
    // One token over the threshold (window − reserve): the moment an agent compacts.
    const crossedWindow = exact + DEFAULT_RESERVE_TOKENS - 1;
    const runs = size >= 1_000_000 ? FEW_RUNS : RUNS;
    const pair = [crossedWindow, CORPUS_WINDOW].map((windowTokens): Row => {
      progress(`${name} @ ${windowTokens}`);
      return measureParsed(name, input, conversation, windowTokens, runs);
    });
    rows.push(...pair);
    growth.push({
      exactTokens: exact,
      parseMs: pair[0]!.parseMs,
      baselineMs: pair[0]!.baselineMs,
      thresholdWindowMs: pair[0]!.prepareMs,
      fixedWindowMs: pair[1]!.prepareMs,
    });
  }
  return { rows, growth };
}

function piRows(): PiRow[] {
  return piSessionFiles().map((file) => {
    const name = path.relative(corpusDir, file).replace(/\.jsonl$/, "");
    progress(`pi ${name}`);
    const input = loadPiSession(file);
    const conversation = parseConversation(input);
    const branch = piBranch(file);
    const pi = piSettings(DEFAULT_KEEP_RECENT_TOKENS, DEFAULT_RESERVE_TOKENS);
    const work = workload(input, conversation, CORPUS_WINDOW);
    const [baseline, compactd, piRuns] = interleavedRuns([work.fullPass, work.prepare, () => runPiPrepare(branch, pi)], RUNS);
    const accuracy = measureAccuracy(conversation, CORPUS_WINDOW);
    return {
      name,
      exactTokens: accuracy.exactTokens,
      baselineMs: median(baseline!),
      compactdMs: median(compactd!),
      piMs: median(piRuns!),
      compactdRatio: ratioSpread(compactd!, baseline!),
      piRatio: ratioSpread(piRuns!, baseline!),
      keepBudget: DEFAULT_KEEP_RECENT_TOKENS,
      compactdKept: accuracy.keptTokens,
      compactdNewestGroupOnly: accuracy.newestGroupOnly,
      piKept: exactTokensOf(piKeptTail(branch, runPiPrepare(branch, pi))),
    };
  });
}

function section(rows: readonly Row[], tau: TauSummary | undefined, pi: readonly PiRow[], growth: readonly GrowthRow[]): string {
  return `${machineLines(machine(), COMMAND)}

Settings: reserve ${DEFAULT_RESERVE_TOKENS.toLocaleString("en-US")}, keep-recent ${DEFAULT_KEEP_RECENT_TOKENS.toLocaleString("en-US")} (lowered by \`normalizeSettings\` to a quarter of window − reserve on small windows), no usage hint. Corpus rows use a ${CORPUS_WINDOW.toLocaleString("en-US")}-token window. Each generated size runs twice: with the window it has just crossed (exact tokens + reserve − 1, so the threshold is one token below the conversation) and with the ${CORPUS_WINDOW.toLocaleString("en-US")} window.

How it is measured:
- *full pass*: one \`countTextTokens\` (o200k_base: gpt-tokenizer's vocabulary and pre-tokenizer, compactd's merge; special tokens as plain text; pre-tokens longer than ${MAX_PIECE_CHARS} characters counted in overlapping windows) over the text the estimator prices: the system prompt and every block's text, tool inputs as JSON, joined. It is built by the estimator's own \`pricedParts\` and counted by its own tokenizer call, so it prices exactly as the estimator counts.
- *prepare*: \`prepare(conversation, settings, new TokenEstimator())\`, the conversation parsed once beforehand; *parse* is \`parseConversation\` on the raw input, timed on its own.
- Medians of ${RUNS} timed runs (${FEW_RUNS} for the 1M rows) after one untimed run, full pass and prepare alternating in one loop, a forced GC before each call. The ratio is the median of the per-round ratios (each round runs both back to back), so it can differ a little from the quotient of the two median columns; the quartiles of the per-round ratios follow it in brackets. The machine is shared with other work, so absolute times move between runs; the ratios are what this table is for.
- The tau-bench tasks are timed as one batch: each call parses, passes over or prepares every task.
- *tokenized by prepare*: the share of the messages' exact tokens that \`prepare\` ran through the tokenizer (the tail walk and the calibration sample); the rest it priced by the calibrated ratio. Not included: the summarization prompt's fixed text and the transcript lines \`fitSummarizerInput\` counts exactly near its budget, which \`prepare\` also tokenizes.
- *kept tail, exact*: the messages from \`firstKeptIndex\` on, each counted exactly with a fresh estimator, against the keep-recent budget. *tokensBefore vs exact*: \`prepare\`'s total against every message counted exactly.

${mainTable(rows, tau)}

pi's \`prepareCompaction\` (@mariozechner/pi-coding-agent 0.73.1, keepRecentTokens ${DEFAULT_KEEP_RECENT_TOKENS.toLocaleString("en-US")}, reserveTokens ${DEFAULT_RESERVE_TOKENS.toLocaleString("en-US")}) on the session's branch as pi builds it, timed in one loop with the full pass and compactd's \`prepare\`; both kept tails counted exactly the same way:

${piTable(pi)}

Growth with length (the generated rows, medians per 1k exact tokens):

${growthTable(growth)}

Verdicts of this run:

${verdicts(rows, pi)}
`;
}

test("core benchmark: prepare against one full tokenizer pass, on the corpus and on generated conversations", () => {
  const corpus = listCorpusConversations();
  const sessions = corpus.filter((c) => c.source !== "tau-bench");
  const largest = sessions.reduce((a, b) => (JSON.stringify(a.input).length >= JSON.stringify(b.input).length ? a : b));
  warmUp(largest);

  const rows: Row[] = sessions.map((c) => {
    progress(c.name);
    return { ...measureRow(c.name, c.input, CORPUS_WINDOW, RUNS), name: shortName(c.name) };
  });
  progress("tau-bench");
  const tau = tauSummary(corpus.filter((c) => c.source === "tau-bench"));
  const generated = generatedRows();
  const pi = piRows();

  const all = [...rows, ...generated.rows];
  progress("done");
  const body = section(all, tau, pi, generated.growth);
  process.stdout.write(`\n${body}\n`);
  writeGeneratedSection(DOC, "core", "Core", body);
}, 600_000);

test("core benchmark: counting adversarial text against corpus text, per megabyte", () => {
  const sessions = listCorpusConversations().filter((c) => c.source !== "tau-bench");
  const corpusText = sessions.map((c) => conversationText(parseConversation(c.input))).join("\n");
  const rows = measureAdversarial(corpusText, ADVERSARIAL_RUNS, progress);
  progress("done");
  const body = `${machineLines(machine(), COMMAND)}\n\n${adversarialSection(rows, ADVERSARIAL_RUNS, MAX_PIECE_CHARS)}`;
  process.stdout.write(`\n${body}\n`);
  writeGeneratedSection(DOC, "core-adversarial", "Core: adversarial text", body);
}, 900_000);
