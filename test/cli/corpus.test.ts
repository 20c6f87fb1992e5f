/**
 * The CLI on real agent sessions (Claude Code, pi, tau-bench), converted by
 * the corpus helper: every invariant the spec promises, on data nobody
 * designed to pass.
 */
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { parseConversation } from "../../src/core/formats/parseConversation.js";
import { normalizeSettings, summaryBudget } from "../../src/core/settings.js";
import { TokenEstimator } from "../../src/core/tokenEstimator.js";
import { checkToolPairing } from "../../src/core/toolPairing.js";
import { listCorpusConversations, writeConversationFiles } from "../helpers/corpus.js";
import { runCli } from "../helpers/runCli.js";

interface Line {
  file: string;
  status: string;
  messages: unknown[];
  firstKeptIndex: number;
  tokensBefore: number;
  tokensAfter: number;
  degraded: boolean;
  summary: string;
}

const noKey = { ANTHROPIC_API_KEY: "" };

async function writeAll(entries: { name: string; input: unknown }[]): Promise<{ dir: string; byFile: Map<string, unknown> }> {
  const dir = await mkdtemp(path.join(tmpdir(), "compactd-corpus-"));
  return { dir, byFile: writeConversationFiles(dir, entries) };
}

function linesOf(stdout: string): Line[] {
  return stdout.trim().split("\n").map((l) => JSON.parse(l) as Line);
}

function inputMessages(input: unknown): unknown[] {
  return Array.isArray(input) ? input : (input as { messages: unknown[] }).messages;
}

describe.each([
  { source: "long sessions (Claude Code, pi)", filter: (s: string) => s !== "tau-bench", window: 200_000, extra: [] as string[] },
  { source: "tau-bench trajectories", filter: (s: string) => s === "tau-bench", window: 8_000, extra: ["--reserve-tokens", "1000"] },
])("compactd compact on the corpus: $source", ({ filter, window, extra }) => {
  let lines: Line[];
  let byFile: Map<string, unknown>;
  const settings = normalizeSettings({ contextWindow: window, reserveTokens: extra.length > 0 ? 1_000 : undefined });

  beforeAll(async () => {
    const written = await writeAll(listCorpusConversations().filter((c) => filter(c.source)));
    byFile = written.byFile;
    const run = await runCli(["compact", written.dir, "--context-window", String(window), ...extra], { env: noKey });
    expect(run.code).toBe(0);
    lines = linesOf(run.stdout);
  }, 120_000);

  it("compacts the conversations that exceed the keep-recent budget and leaves the rest alone", () => {
    expect(lines.length).toBe(byFile.size);
    expect(lines.filter((l) => l.status === "compacted").length).toBeGreaterThan(0);
    for (const l of lines) expect(["compacted", "nothing_to_compact"]).toContain(l.status);
  });

  it("keeps tool calls and results paired and returns the tail verbatim", () => {
    for (const l of lines.filter((x) => x.status === "compacted")) {
      const pairing = checkToolPairing(parseConversation(l.messages).messages);
      expect(pairing.orphanResults, l.file).toEqual([]);
      const original = inputMessages(byFile.get(l.file));
      expect(l.messages.slice(-(original.length - l.firstKeptIndex))).toEqual(original.slice(l.firstKeptIndex));
    }
  });

  it("keeps the tail within the keep-recent budget by an exact count, unless its newest group alone is larger", () => {
    for (const l of lines.filter((x) => x.status === "compacted")) {
      const conv = parseConversation(byFile.get(l.file));
      const estimator = new TokenEstimator();
      const tail = conv.messages.slice(l.firstKeptIndex);
      const tokens = tail.reduce((s, m) => s + estimator.count(m), 0);
      if (tokens > settings.keepRecentTokens) expect(tail.slice(1).every((m) => m.kind === "toolResult"), l.file).toBe(true);
    }
  });

  it("frees tokens with the offline summarizer, wherever the head is larger than the summary cap", () => {
    let checked = 0;
    for (const l of lines.filter((x) => x.status === "compacted")) {
      expect(l).toMatchObject({ degraded: false, summarizer: "offline" });
      const conv = parseConversation(byFile.get(l.file));
      const estimator = new TokenEstimator();
      const head = conv.messages.slice(0, l.firstKeptIndex).filter((m) => m.kind !== "system");
      const headTokens = head.reduce((s, m) => s + estimator.count(m), 0);
      // A summary cannot be much smaller than a head that already fits the cap.
      if (headTokens <= 2 * summaryBudget(settings)) continue;
      checked++;
      expect(l.tokensAfter, l.file).toBeLessThan(l.tokensBefore);
    }
    expect(checked).toBeGreaterThan(0);
  });

  it("reports nothing to compact when its own output is compacted again", async () => {
    const compacted = lines.filter((x) => x.status === "compacted");
    const again = await writeAll(compacted.map((l) => ({ name: path.basename(l.file, ".json"), input: l.messages })));
    const run = await runCli(["compact", again.dir, "--context-window", String(window), ...extra], { env: noKey });
    // A directory where nothing needed compacting exits like a single such file.
    expect(run.code).toBe(3);
    expect(linesOf(run.stdout).map((l) => l.status)).toEqual(compacted.map(() => "nothing_to_compact"));
  }, 120_000);
});
