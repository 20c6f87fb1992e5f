/**
 * The shared corpus (`../shared/corpus`) for tests and benchmarks: the
 * loaders of src/cli/corpus.ts, pointed at it.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import * as corpus from "../../src/cli/corpus.js";
import { parseConversation } from "../../src/core/formats/parseConversation.js";
import { conversationText } from "../../bench/pricedText.js";
import { repoRoot } from "./repoRoot.js";

export { loadClaudeCodeSession, loadPiSession } from "../../src/cli/corpus.js";
export type { CompactedSession, CorpusConversation, CorpusSource } from "../../src/cli/corpus.js";
export type { SessionMessage } from "../../src/cli/sessionLogs.js";

export const corpusDir = path.resolve(repoRoot, "../shared/corpus");

export function loadTauBench(file?: string): corpus.CorpusConversation[] {
  return corpus.loadTauBench(corpusDir, file);
}

export function claudeCodeSessionFiles(): string[] {
  return corpus.claudeCodeSessionFiles(corpusDir);
}

export function piSessionFiles(): string[] {
  return corpus.piSessionFiles(corpusDir);
}

export function listCorpusConversations(): corpus.CorpusConversation[] {
  return corpus.listCorpusConversations(corpusDir);
}

/** Every corpus conversation's text as the token estimator prices it (bench/pricedText.ts), for comparing counters on it. */
export function pricedCorpusTexts(): { readonly name: string; readonly source: corpus.CorpusSource; readonly text: string }[] {
  return listCorpusConversations().map((c) => ({ name: c.name, source: c.source, text: conversationText(parseConversation(c.input)) }));
}

export function loadClaudeCodeCompaction(file: string): corpus.CompactedSession | undefined {
  return corpus.loadClaudeCodeCompaction(corpusDir, file);
}

export function loadPiCompaction(file: string): corpus.CompactedSession | undefined {
  return corpus.loadPiCompaction(corpusDir, file);
}

export function listCompactedSessions(): corpus.CompactedSession[] {
  return corpus.listCompactedSessions(corpusDir);
}

/**
 * Writes conversations as JSON files `compactd compact` takes, one per
 * conversation, named after it; returns each file's path with its input.
 */
export function writeConversationFiles(dir: string, conversations: readonly { name: string; input: unknown }[]): Map<string, unknown> {
  mkdirSync(dir, { recursive: true });
  const byFile = new Map<string, unknown>();
  for (const { name, input } of conversations) {
    const file = path.join(dir, `${name.replace(/[^\w.-]+/g, "_")}.json`);
    writeFileSync(file, JSON.stringify(input));
    byFile.set(file, input);
  }
  return byFile;
}
