/**
 * Real agent sessions from a corpus folder (the project's `../shared/corpus`),
 * converted into compactd input, for `compactd demo`, the tests and the
 * benchmarks.
 *
 * The sessions are stored in their agents' own log formats (Claude Code and pi
 * session JSONL, tau-bench trajectories). The logs are converted as
 * `compactd compact` converts a user's own (sessionLogs.ts), into the
 * conversation that agent actually sent its model, so everything runs on real
 * lengths, real tool-result sizes and real pairing patterns. This file finds
 * the corpus's files and the compactions the agents made in them. The corpus
 * is read in place, never copied into the repository.
 */
import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { claudeCodeMessages, parseJsonLines, piMessages, type LogLine, type SessionConversation } from "./sessionLogs.js";

export type CorpusSource = "claude-code" | "pi" | "tau-bench";

export interface CorpusConversation {
  /** The file it came from, relative to the corpus folder, without extension (plus `#N` for tau-bench tasks). */
  readonly name: string;
  readonly source: CorpusSource;
  /** What `parseConversation` takes. */
  readonly input: unknown;
}

/** A session log of the corpus, read whole. */
function readLog(file: string): LogLine[] {
  return parseJsonLines(file, readFileSync(file, "utf8"));
}

export function loadClaudeCodeSession(file: string): SessionConversation {
  return claudeCodeMessages(file, readLog(file));
}

export function loadPiSession(file: string): SessionConversation {
  return piMessages(file, readLog(file));
}

/** A session as it stood when its agent compacted it, and the summary the agent wrote then. */
export interface CompactedSession {
  readonly name: string;
  /** The conversation the agent had when it compacted. */
  readonly input: SessionConversation;
  /** The agent's own summary of it: the reference a summary is measured against. */
  readonly reference: string;
}

/**
 * The first compaction of a Claude Code session: the messages before its
 * `compact_boundary` event, and the user message right after it, which is
 * Claude Code's summary. Undefined for a session that never compacted.
 */
export function loadClaudeCodeCompaction(corpusDir: string, file: string): CompactedSession | undefined {
  const lines = readLog(file);
  const boundary = lines.findIndex(({ event }) => event.type === "system" && event.subtype === "compact_boundary");
  if (boundary < 0) return undefined;
  const summary = (lines[boundary + 1]?.event.message as { content?: unknown } | undefined)?.content;
  if (typeof summary !== "string") return undefined;
  return { name: corpusName(corpusDir, file), input: claudeCodeMessages(file, lines.slice(0, boundary)), reference: summary };
}

/** The first compaction of a pi session: the entries before its `compaction` entry and that entry's summary. */
export function loadPiCompaction(corpusDir: string, file: string): CompactedSession | undefined {
  const lines = readLog(file);
  const at = lines.findIndex(({ event }) => event.type === "compaction");
  const summary = lines[at]?.event.summary;
  if (typeof summary !== "string") return undefined;
  return { name: corpusName(corpusDir, file), input: piMessages(file, lines.slice(0, at)), reference: summary };
}

/** Every corpus session with an agent-written summary: Claude Code's, then pi's. */
export function listCompactedSessions(corpusDir: string): CompactedSession[] {
  const found = [
    ...claudeCodeSessionFiles(corpusDir).map((file) => loadClaudeCodeCompaction(corpusDir, file)),
    ...piSessionFiles(corpusDir).map((file) => loadPiCompaction(corpusDir, file)),
  ];
  return found.filter((session): session is CompactedSession => session !== undefined);
}

/** The tau-bench trajectories of one file: each task's `traj` is an OpenAI message list, used as is. */
export function loadTauBench(corpusDir: string, file = path.join(corpusDir, "tau-bench/gpt-4o-airline.json")): CorpusConversation[] {
  const name = path.relative(corpusDir, file).replace(/\.json$/, "");
  const tasks = JSON.parse(readFileSync(file, "utf8")) as { traj: unknown[] }[];
  return tasks.map((task, i) => ({ name: `${name}#${i}`, source: "tau-bench", input: task.traj }));
}

function jsonlFiles(dir: string): string[] {
  return readdirSync(dir)
    .filter((entry) => entry.endsWith(".jsonl"))
    .sort()
    .map((entry) => path.join(dir, entry));
}

/** Claude Code main sessions and every subagent log beside them. */
export function claudeCodeSessionFiles(corpusDir: string): string[] {
  const root = path.join(corpusDir, "spotter-claude-code");
  const subagentDirs = readdirSync(root, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => path.join(root, entry.name, "subagents"))
    .sort();
  return [...jsonlFiles(root), ...subagentDirs.flatMap(jsonlFiles)];
}

export function piSessionFiles(corpusDir: string): string[] {
  return jsonlFiles(path.join(corpusDir, "pi-mono-sessions"));
}

function corpusName(corpusDir: string, file: string): string {
  return path.relative(corpusDir, file).replace(/\.jsonl$/, "");
}

/** Every conversation in the corpus: Claude Code sessions, pi sessions, then tau-bench tasks. */
export function listCorpusConversations(corpusDir: string): CorpusConversation[] {
  return [
    ...claudeCodeSessionFiles(corpusDir).map((file) => ({
      name: corpusName(corpusDir, file),
      source: "claude-code" as const,
      input: loadClaudeCodeSession(file),
    })),
    ...piSessionFiles(corpusDir).map((file) => ({ name: corpusName(corpusDir, file), source: "pi" as const, input: loadPiSession(file) })),
    ...loadTauBench(corpusDir),
  ];
}
