/**
 * The summary-fidelity benchmark of issue 10 (`npm run bench:fidelity`): what
 * does the agent still know after a compaction?
 *
 * On the corpus sessions that their own agent compacted (two Claude Code
 * sessions, one pi session), the agent's summary is the reference. Its facts
 * (see referenceFacts.ts), counted only where they occur in the session, and
 * the user's requests of the summarized range are looked for in three texts:
 * the summarization prompt a model would be sent, the offline summary, and the
 * final output of an offline compaction (summary plus the verbatim tail).
 * Checkpoints are checked too: a checkpoint's file lists may only name paths
 * its own turns touched. Nothing is timed.
 */
import { fileURLToPath } from "node:url";
import { test } from "vitest";
import { createCompactor, OFFLINE_SUMMARIZER, type Result } from "../src/core/compactor.js";
import { collectFileOperations, NO_FILE_OPERATIONS, splitFileOperations } from "../src/core/fileOperations.js";
import { parseConversation } from "../src/core/formats/parseConversation.js";
import type { Message } from "../src/core/message.js";
import { userRequestsOf } from "../src/core/pinnedRequests.js";
import { normalizeSettings } from "../src/core/settings.js";
import type { Summarizer, SummarizationRequest } from "../src/core/summarizer.js";
import { pricedParts, TokenEstimator } from "../src/core/tokenEstimator.js";
import { listCompactedSessions, type CompactedSession } from "../test/helpers/corpus.js";
import { writeGeneratedSection } from "./docSection.js";
import { FACT_KINDS, factsOf, kept, type Fact, type FactKind } from "./referenceFacts.js";
import { machine, machineLines } from "./report.js";

const COMMAND = "npm run bench:fidelity";
/** What the agents in the corpus ran with. */
const SETTINGS = normalizeSettings({ contextWindow: 200_000 });
const DOC = fileURLToPath(new URL("../docs/BENCHMARKS.md", import.meta.url));
/** A request counts as kept when its first this-many characters are found verbatim (long ones are clipped head and tail). */
const REQUEST_KEY_CHARS = 200;

interface Measured {
  readonly recall: number;
  readonly tokens: number;
  readonly byKind: ReadonlyMap<FactKind, number>;
  readonly requests: number;
}

interface SessionRow {
  readonly name: string;
  readonly facts: readonly Fact[];
  /**
   * The facts that occur in the summarized range: all the prompt can carry.
   * A fact found only in the kept tail is never sent to the summarizer, by
   * design, so it is no measure of what the transcript's clipping loses.
   */
  readonly rangeFacts: readonly Fact[];
  /** The prompt's recall of `rangeFacts`. */
  readonly promptOfRange: Measured;
  readonly requests: number;
  readonly prompt: Measured;
  /** The prompt plus the verbatim tail: everything a model-written compaction draws on. */
  readonly promptAndTail: Measured;
  readonly offline: Measured;
  readonly final: Measured;
  readonly checkpointStrays: number;
  readonly omitted: number;
  readonly messages: number;
}

/** Records each request and answers with a one-line summary: the prompt is what is measured. */
function recordingSummarizer(): Summarizer & { readonly requests: SummarizationRequest[] } {
  const requests: SummarizationRequest[] = [];
  return {
    name: "recording",
    requests,
    async summarize(request) {
      requests.push(request);
      return { text: "## Goal\n(recorded)", truncated: false };
    },
  };
}

function textOf(messages: readonly Message[]): string {
  return messages.map((m) => pricedParts(m).parts.join("\n")).join("\n");
}

function measure(text: string, facts: readonly Fact[], requests: readonly string[], tokens: number): Measured {
  const byKind = new Map<FactKind, number>(FACT_KINDS.map((kind) => [kind, kept(facts.filter((f) => f.kind === kind), text)]));
  const haystack = text.replace(/\s+/g, " ");
  return {
    recall: kept(facts, text),
    tokens,
    byKind,
    requests: requests.filter((r) => haystack.includes(r.replace(/\s+/g, " ").slice(0, REQUEST_KEY_CHARS))).length,
  };
}

/** Paths a checkpoint's file lists name that no message of its turns touched. */
function checkpointStrays(result: Result, messages: readonly Message[]): number {
  if (result.checkpoint === null) return 0;
  const lastOfTurn = messages.findLastIndex((m) => m.turnId === result.checkpoint!.turnId);
  const own = collectFileOperations(messages.slice(0, lastOfTurn + 1), NO_FILE_OPERATIONS);
  const touched = new Set([...own.read, ...own.modified]);
  const listed = splitFileOperations(result.checkpoint.summary).files;
  return [...listed.read, ...listed.modified].filter((p) => !touched.has(p)).length;
}

async function measureSession(session: CompactedSession): Promise<SessionRow> {
  const conversation = parseConversation(session.input);
  const estimator = new TokenEstimator();

  const recorder = recordingSummarizer();
  await createCompactor({ settings: SETTINGS, summarizer: recorder })!.compact(conversation, { reason: "threshold" });
  const offline = await createCompactor({ settings: SETTINGS, summarizer: OFFLINE_SUMMARIZER })!.compact(parseConversation(session.input), {
    reason: "threshold",
  });

  const summarized = conversation.messages.slice(0, offline.firstKeptIndex);
  const facts = factsOf(session.reference, textOf(conversation.messages));
  const rangeFacts = factsOf(session.reference, textOf(summarized));
  const requests = userRequestsOf(summarized).map((r) => r.text);
  const prompt = recorder.requests.map((r) => `${r.system}\n${r.prompt}`).join("\n");
  const tail = textOf(parseConversation(offline.messages).messages.slice(1));
  const prose = splitFileOperations(offline.summary).prose;
  return {
    name: session.name,
    facts,
    rangeFacts,
    requests: requests.length,
    prompt: measure(prompt, facts, requests, estimator.countText(prompt)),
    promptOfRange: measure(prompt, rangeFacts, requests, 0),
    promptAndTail: measure(`${prompt}\n${tail}`, facts, requests, 0),
    offline: measure(offline.summary, facts, requests, estimator.countText(prose)),
    final: measure(`${offline.summary}\n${tail}`, facts, requests, offline.tokensAfter),
    checkpointStrays: checkpointStrays(offline, conversation.messages),
    omitted: offline.omitted,
    messages: offline.firstKeptIndex,
  };
}

const pct = (n: number, of: number): string => (of === 0 ? "–" : `${Math.round((100 * n) / of)}%`);
const int = (n: number): string => Math.round(n).toLocaleString("en-US");

function sessionTable(rows: readonly SessionRow[]): string {
  const sum = (f: (r: SessionRow) => number): number => rows.reduce((s, r) => s + f(r), 0);
  const cell = (x: Measured, of: number): string => `${pct(x.recall, of)} · ${int(x.tokens)}`;
  const line = (name: string, r: Pick<SessionRow, "prompt" | "promptOfRange" | "offline" | "final">, facts: number, rangeFacts: number, requests: number, extra: string) =>
    `| ${name} | ${int(facts)} | ${pct(r.promptOfRange.recall, rangeFacts)} of ${int(rangeFacts)} · ${cell(r.prompt, facts)} | ${cell(r.offline, facts)} | ${cell(r.final, facts)} | ${r.offline.requests}/${requests} · ${r.final.requests}/${requests} | ${extra} |`;
  const lines = [
    "| session | reference facts | summarizer prompt: recall of the facts in the summarized range · of all facts · tokens | offline summary: recall · tokens¹ | final output²: recall · tokens | user requests kept: offline summary · final output | omitted / summarized messages · checkpoint paths outside its turns |",
    "|---|---:|---:|---:|---:|---:|---:|",
    ...rows.map((r) => line(r.name, r, r.facts.length, r.rangeFacts.length, r.requests, `${int(r.omitted)} / ${int(r.messages)} · ${r.checkpointStrays}`)),
  ];
  const pooled = (k: "prompt" | "promptOfRange" | "offline" | "final"): Measured => ({
    recall: sum((r) => r[k].recall),
    tokens: sum((r) => r[k].tokens) / rows.length,
    byKind: new Map(),
    requests: sum((r) => r[k].requests),
  });
  lines.push(
    line(
      "**pooled** (tokens: mean)",
      { prompt: pooled("prompt"), promptOfRange: pooled("promptOfRange"), offline: pooled("offline"), final: pooled("final") },
      sum((r) => r.facts.length),
      sum((r) => r.rangeFacts.length),
      sum((r) => r.requests),
      `${int(sum((r) => r.omitted))} / ${int(sum((r) => r.messages))} · ${sum((r) => r.checkpointStrays)}`,
    ),
  );
  return lines.join("\n");
}

type Column = "prompt" | "promptOfRange" | "promptAndTail" | "offline" | "final";

function kindTable(rows: readonly SessionRow[]): string {
  const lines = [
    "| fact kind (pooled) | facts | in the summarized range | summarizer prompt: of the range's · of all | summarizer prompt + kept tail | offline summary | final output |",
    "|---|---:|---:|---:|---:|---:|---:|",
  ];
  for (const kind of FACT_KINDS) {
    const total = rows.reduce((s, r) => s + r.facts.filter((f) => f.kind === kind).length, 0);
    const inRange = rows.reduce((s, r) => s + r.rangeFacts.filter((f) => f.kind === kind).length, 0);
    const count = (k: Column) => rows.reduce((s, r) => s + r[k].byKind.get(kind)!, 0);
    const of = (k: Column) => pct(count(k), total);
    lines.push(
      `| ${kind} | ${total} | ${inRange} | ${pct(count("promptOfRange"), inRange)} · ${of("prompt")} | ${of("promptAndTail")} | ${of("offline")} | ${of("final")} |`,
    );
  }
  const facts = rows.reduce((s, r) => s + r.facts.length, 0);
  const inRange = rows.reduce((s, r) => s + r.rangeFacts.length, 0);
  const count = (k: Column) => rows.reduce((s, r) => s + r[k].recall, 0);
  const all = (k: Column) => pct(count(k), facts);
  lines.push(
    `| **all** | ${facts} | ${inRange} | ${pct(count("promptOfRange"), inRange)} · ${all("prompt")} | ${all("promptAndTail")} | ${all("offline")} | ${all("final")} |`,
  );
  return lines.join("\n");
}

test("summary fidelity against the agents' own summaries", async () => {
  const rows: SessionRow[] = [];
  for (const session of listCompactedSessions()) rows.push(await measureSession(session));
  const generated = [
    machineLines(machine(), COMMAND),
    `- Settings: context window ${int(SETTINGS.contextWindow)}, reserve ${int(SETTINGS.reserveTokens)}, keep-recent ${int(SETTINGS.keepRecentTokens)} (the defaults); tokens are o200k.`,
    "",
    sessionTable(rows),
    "",
    "¹ Without the file blocks (`<read-files>`, `<modified-files>`); with the pinned `<user-requests>` block. ² Offline summary plus the verbatim tail: what the agent has after an offline compaction; tokens are `tokensAfter`.",
    "",
    kindTable(rows),
  ].join("\n");
  console.log(generated);
  writeGeneratedSection(DOC, "fidelity", "Summary fidelity", generated);
});
