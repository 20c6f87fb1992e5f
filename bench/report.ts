/**
 * The core benchmark's markdown: the tables, the machine they were measured
 * on, and one-line verdicts against the goals of issue 2. Only medians and
 * ratios between medians of the same loop are printed.
 */
import { existsSync, readFileSync } from "node:fs";
import os from "node:os";
import type { Row, Timings } from "./measure.js";
import type { Spread } from "./timing.js";

/** Goal (a): prepare costs at most this share of one full tokenizer pass. */
export const SPEED_GOAL = 0.25;
/** Goal (b): tokensBefore within this share of the exact count. */
export const TOTAL_ERROR_GOAL = 0.05;

export interface TauSummary extends Timings {
  readonly name: string;
  readonly tasks: number;
  readonly messages: number;
  readonly exactTokens: number;
  readonly largestTokens: number;
  readonly windowTokens: number;
  readonly keepBudget: number;
  readonly tokenizedShare: number;
  readonly cut: number;
  readonly keptOverBudget: number;
  readonly largestTotalError: number;
}

export interface PiRow {
  readonly name: string;
  readonly exactTokens: number;
  readonly baselineMs: number;
  readonly compactdMs: number;
  readonly piMs: number;
  readonly compactdRatio: Spread;
  readonly piRatio: Spread;
  readonly keepBudget: number;
  readonly compactdKept: number | undefined;
  readonly compactdNewestGroupOnly: boolean;
  readonly piKept: number;
}

export interface GrowthRow {
  readonly exactTokens: number;
  readonly parseMs: number;
  readonly baselineMs: number;
  readonly thresholdWindowMs: number;
  readonly fixedWindowMs: number;
}

export interface Machine {
  readonly cpus: number;
  readonly cpuModel: string;
  readonly memoryGiB: number;
  readonly node: string;
  readonly date: string;
}

export function machine(): Machine {
  const cpuinfo = existsSync("/proc/cpuinfo") ? readFileSync("/proc/cpuinfo", "utf8") : "";
  const model = /^model name\s*:\s*(.+)$/m.exec(cpuinfo)?.[1] ?? os.cpus()[0]?.model ?? "unknown";
  return {
    cpus: os.availableParallelism(),
    cpuModel: model.trim(),
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    date: new Date().toISOString().slice(0, 10),
  };
}

const int = (n: number) => Math.round(n).toLocaleString("en-US");
const ms = (n: number) => n.toFixed(n < 10 ? 2 : 1);
const pct = (n: number) => `${n >= 0 ? "+" : ""}${(n * 100).toFixed(1)}%`;
const mark = (ok: boolean) => (ok ? "✓" : "✗");

const spread = (s: Spread) => `${s.median.toFixed(3)} (${s.low.toFixed(2)}–${s.high.toFixed(2)})`;

function ratioCell(ratio: Spread): string {
  return `**${ratio.median.toFixed(3)}** (${ratio.low.toFixed(2)}–${ratio.high.toFixed(2)}) ${mark(ratio.median <= SPEED_GOAL)}`;
}

function keptCell(kept: number | undefined, budget: number, newestGroupOnly = false): string {
  if (kept === undefined) return "nothing to compact";
  if (kept <= budget) return `${int(kept)} ✓`;
  const over = `${int(kept)} (${pct(kept / budget - 1)})`;
  return newestGroupOnly ? `${over}: newest message alone ¹` : `${over} ✗`;
}

function totalCell(tokensBefore: number | undefined, exact: number): string {
  if (tokensBefore === undefined) return "—";
  const error = tokensBefore / exact - 1;
  return `${pct(error)} ${mark(Math.abs(error) <= TOTAL_ERROR_GOAL)}`;
}

export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const line = (cells: readonly string[]) => `| ${cells.join(" | ")} |`;
  return [line(header), line(header.map(() => "---")), ...rows.map(line)].join("\n");
}

export function mainTable(rows: readonly Row[], tau: TauSummary | undefined): string {
  const body = rows.map((r) => [
    r.name,
    int(r.messages),
    int(r.exactTokens),
    int(r.windowTokens),
    int(r.keepBudget),
    ms(r.parseMs),
    ms(r.baselineMs),
    ms(r.prepareMs),
    ratioCell(r.ratio),
    pct(r.tokenizedShare).slice(1),
    keptCell(r.keptTokens, r.keepBudget, r.newestGroupOnly),
    totalCell(r.tokensBefore, r.exactTokens),
  ]);
  if (tau !== undefined) {
    body.push([
      `${tau.name} (${tau.tasks} tasks, timed as one batch)`,
      int(tau.messages),
      `${int(tau.exactTokens)} (largest ${int(tau.largestTokens)})`,
      int(tau.windowTokens),
      int(tau.keepBudget),
      ms(tau.parseMs),
      ms(tau.baselineMs),
      ms(tau.prepareMs),
      ratioCell(tau.ratio),
      pct(tau.tokenizedShare).slice(1),
      tau.cut === 0 ? "nothing to compact in any task" : `${tau.keptOverBudget} of ${tau.cut} cut tasks over`,
      tau.cut === 0 ? "—" : `largest ${pct(tau.largestTotalError)} ${mark(Math.abs(tau.largestTotalError) <= TOTAL_ERROR_GOAL)}`,
    ]);
  }
  return table(
    [
      "conversation",
      "messages",
      "exact tokens",
      "window",
      "keep-recent budget",
      "parse ms",
      "full pass ms",
      "prepare ms",
      `prepare / full pass (goal ≤ ${SPEED_GOAL})`,
      "tokenized by prepare",
      "kept tail, exact (≤ budget)",
      `tokensBefore vs exact (±${TOTAL_ERROR_GOAL * 100}%)`,
    ],
    body,
  );
}

export function piTable(rows: readonly PiRow[]): string {
  return table(
    [
      "pi session",
      "exact tokens",
      "full pass ms",
      "pi `prepareCompaction` ms",
      "pi / full pass",
      "pi kept tail, exact",
      "compactd `prepare` ms",
      "compactd / full pass",
      "compactd kept tail, exact",
    ],
    rows.map((r) => [
      r.name,
      int(r.exactTokens),
      ms(r.baselineMs),
      ms(r.piMs),
      spread(r.piRatio),
      keptCell(r.piKept, r.keepBudget),
      ms(r.compactdMs),
      spread(r.compactdRatio),
      keptCell(r.compactdKept, r.keepBudget, r.compactdNewestGroupOnly),
    ]),
  );
}

export function growthTable(rows: readonly GrowthRow[]): string {
  const per1k = (value: number, tokens: number) => ((value * 1000) / tokens).toFixed(3);
  return table(
    ["exact tokens", "parse ms / 1k tokens", "full pass ms / 1k tokens", "prepare ms / 1k tokens, window just crossed", "prepare ms / 1k tokens, 200k window"],
    rows.map((r) => [
      int(r.exactTokens),
      per1k(r.parseMs, r.exactTokens),
      per1k(r.baselineMs, r.exactTokens),
      per1k(r.thresholdWindowMs, r.exactTokens),
      per1k(r.fixedWindowMs, r.exactTokens),
    ]),
  );
}

/** Verdicts over every row that compacted (a row with nothing to compact has no tail or estimate to judge). */
export function verdicts(rows: readonly Row[], pi: readonly PiRow[]): string {
  const slow = rows.filter((r) => r.ratio.median > SPEED_GOAL);
  const cut = rows.filter((r) => r.keptTokens !== undefined);
  const over = cut.filter((r) => r.keptTokens! > r.keepBudget && !r.newestGroupOnly);
  const newestOnly = cut.filter((r) => r.keptTokens! > r.keepBudget && r.newestGroupOnly);
  const off = cut.filter((r) => Math.abs(r.tokensBefore! / r.exactTokens - 1) > TOTAL_ERROR_GOAL);
  const names = (list: readonly Row[]) => list.map((r) => `${r.name} @ ${int(r.windowTokens)}`).join("; ");
  const lines = [
    `- Goal (a), prepare ≤ ${SPEED_GOAL}× a full pass: met on ${rows.length - slow.length} of ${rows.length} rows` +
      (slow.length > 0 ? `; missed on ${names(slow)}.` : "."),
    `- Goal (b), kept tail ≤ budget by exact count: met on ${cut.length - over.length - newestOnly.length} of ${cut.length} rows that compacted` +
      (over.length > 0 ? `; over on ${names(over)}.` : ".") +
      (newestOnly.length > 0
        ? ` Over the budget by the cut point's one exception (¹: the newest message alone is larger than the budget, and a tail without it is no conversation): ${names(newestOnly)}.`
        : ""),
    `- Goal (b), tokensBefore within ${TOTAL_ERROR_GOAL * 100}% of exact: met on ${cut.length - off.length} of ${cut.length} rows that compacted` +
      (off.length > 0 ? `; off on ${names(off)}.` : "."),
  ];
  for (const p of pi) {
    lines.push(
      `- ${p.name}: pi keeps ${int(p.piKept)} exact tokens for a ${int(p.keepBudget)} budget (${pct(p.piKept / p.keepBudget - 1)}); ` +
        `compactd keeps ${p.compactdKept === undefined ? "everything" : int(p.compactdKept)}.`,
    );
  }
  return lines.join("\n");
}

export function machineLines(m: Machine, command: string): string {
  return [
    `- Date: ${m.date}`,
    `- Machine: ${m.cpus} CPUs (\`nproc\`), ${m.cpuModel}, ${m.memoryGiB} GiB RAM; Node ${m.node}`,
    `- Command: \`${command}\``,
  ].join("\n");
}
