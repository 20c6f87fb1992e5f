/**
 * Real agent sessions from a corpus folder (the project's `../shared/corpus`),
 * converted into compactd input, for `compactd demo`, the tests and the
 * benchmarks.
 *
 * The sessions are stored in their agents' own log formats (Claude Code and pi
 * session JSONL, tau-bench trajectories). The loaders turn each one into the
 * conversation that agent actually sent its model, as `parseConversation`
 * takes it, with a `turn_id` on every message naming the prompt that opened
 * its turn, so everything runs on real lengths, real tool-result sizes and
 * real pairing patterns. The corpus is read in place, never copied into the
 * repository.
 */
import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";

export type CorpusSource = "claude-code" | "pi" | "tau-bench";

export interface CorpusConversation {
  /** The file it came from, relative to the corpus folder, without extension (plus `#N` for tau-bench tasks). */
  readonly name: string;
  readonly source: CorpusSource;
  /** What `parseConversation` takes. */
  readonly input: unknown;
}

/** An Anthropic Messages message as the loaders build it. */
export interface AnthropicCorpusMessage {
  readonly role: "user" | "assistant";
  readonly content: string | unknown[];
  readonly turn_id: string;
}

export interface AnthropicCorpusInput {
  readonly messages: AnthropicCorpusMessage[];
}

type Json = Record<string, unknown>;

function readJsonLines(file: string): Json[] {
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as Json);
}

function isToolResultBlock(block: unknown): boolean {
  return typeof block === "object" && block !== null && (block as Json).type === "tool_result";
}

function toolUseIds(content: readonly unknown[]): string[] {
  return content.flatMap((block) => {
    const b = block as Json;
    return b.type === "tool_use" && typeof b.id === "string" ? [b.id] : [];
  });
}

/**
 * Assembles Anthropic messages from a log in which one model response may be
 * spread over several lines and its tool results over several more.
 *
 * Every call of the open assistant message must be answered in the single user
 * message that follows it, so results are collected until the conversation
 * moves on; calls still unanswered at that point (the user interrupted the
 * agent) get an error result, as the agent itself does before the next request.
 */
class AnthropicMessageBuilder {
  readonly messages: AnthropicCorpusMessage[] = [];
  private turnId: string;
  private assistant: { readonly key: string; readonly content: unknown[] } | undefined;
  private results: unknown[] = [];

  constructor(firstTurnId: string) {
    this.turnId = firstTurnId;
  }

  /** Adds blocks to the open assistant message when `key` matches it, else starts a new one. */
  assistantBlocks(key: string, blocks: readonly unknown[]): void {
    if (this.assistant?.key !== key) {
      this.close();
      this.assistant = { key, content: [] };
    }
    this.assistant.content.push(...blocks);
  }

  toolResults(blocks: readonly unknown[]): void {
    this.results.push(...blocks);
  }

  /** A user message that is not a tool result: it opens a new turn. */
  prompt(turnId: string, content: string | unknown[]): void {
    this.close();
    this.turnId = turnId;
    this.messages.push({ role: "user", content, turn_id: turnId });
  }

  /** Ends the log; calls of a final assistant message may legitimately still be waiting. */
  finish(): AnthropicCorpusInput {
    this.close(false);
    return { messages: this.messages };
  }

  private close(answerAll = true): void {
    const assistant = this.assistant;
    this.assistant = undefined;
    if (assistant !== undefined && assistant.content.length > 0) {
      this.messages.push({ role: "assistant", content: assistant.content, turn_id: this.turnId });
      if (answerAll) this.answerMissingCalls(assistant.content);
    }
    if (this.results.length > 0) this.messages.push({ role: "user", content: this.results, turn_id: this.turnId });
    this.results = [];
  }

  private answerMissingCalls(content: readonly unknown[]): void {
    const answered = new Set(this.results.map((block) => (block as Json).tool_use_id));
    for (const id of toolUseIds(content)) {
      if (answered.has(id)) continue;
      this.results.push({ type: "tool_result", tool_use_id: id, content: "(no result: the tool call was interrupted)", is_error: true });
    }
  }
}

/**
 * A Claude Code session log (`~/.claude/projects/<project>/<session>.jsonl`,
 * main session or subagent).
 *
 * Claude Code writes each content block of a response as its own line, all
 * sharing `message.id`, and writes each tool result as its own user line, often
 * between the lines of the response that made the call (parallel calls finish
 * while the response is still being logged). The lines of one `message.id`
 * become one assistant message and its results one user message after it.
 * Progress, snapshot, queue and system events are not messages and are skipped.
 */
export function loadClaudeCodeSession(file: string): AnthropicCorpusInput {
  return claudeCodeMessages(file, readJsonLines(file));
}

function claudeCodeMessages(file: string, events: readonly Json[]): AnthropicCorpusInput {
  const builder = new AnthropicMessageBuilder(`${path.basename(file, ".jsonl")}:start`);
  for (const event of events) {
    const message = event.message as Json | undefined;
    if (message === undefined) continue;
    const content = message.content as string | unknown[];
    if (event.type === "assistant") {
      builder.assistantBlocks(String(message.id ?? event.uuid), content as unknown[]);
    } else if (event.type === "user") {
      if (Array.isArray(content) && content.some(isToolResultBlock)) builder.toolResults(content);
      else builder.prompt(String(event.uuid), content);
    }
  }
  return builder.finish();
}

/** pi content blocks in Anthropic shape; text blocks already are. */
function piBlock(block: Json): unknown {
  switch (block.type) {
    case "thinking":
      return block.redacted === true
        ? { type: "redacted_thinking", data: block.thinkingSignature }
        : { type: "thinking", thinking: block.thinking, signature: block.thinkingSignature ?? "" };
    case "toolCall":
      return { type: "tool_use", id: block.id, name: block.name, input: block.arguments };
    case "image":
      return { type: "image", source: { type: "base64", media_type: block.mimeType, data: block.data } };
    default:
      return block;
  }
}

function piContent(content: unknown): string | unknown[] {
  return typeof content === "string" ? content : (content as Json[]).map(piBlock);
}

/**
 * A pi coding-agent session (`type: "message"` entries; roles user, assistant,
 * toolResult, and bashExecution for commands the user ran). pi keeps one
 * message per tool result; consecutive ones become one user message of
 * tool_result blocks. Assistant entries with no content (a request aborted
 * before any output) are skipped: there was nothing to send back.
 */
export function loadPiSession(file: string): AnthropicCorpusInput {
  return piMessages(file, readJsonLines(file));
}

function piMessages(file: string, entries: readonly Json[]): AnthropicCorpusInput {
  const builder = new AnthropicMessageBuilder(`${path.basename(file, ".jsonl")}:start`);
  entries.forEach((entry, line) => {
    if (entry.type !== "message") return;
    const message = entry.message as Json;
    const entryId = typeof entry.id === "string" ? entry.id : `line-${line + 1}`;
    switch (message.role) {
      case "user":
        builder.prompt(entryId, piContent(message.content));
        return;
      case "assistant":
        builder.assistantBlocks(entryId, piContent(message.content) as unknown[]);
        return;
      case "toolResult":
        builder.toolResults([
          { type: "tool_result", tool_use_id: message.toolCallId, content: piContent(message.content), is_error: message.isError === true },
        ]);
        return;
      case "bashExecution":
        if (message.excludeFromContext !== true) {
          builder.prompt(entryId, `I ran \`${String(message.command)}\` (exit code ${String(message.exitCode)}):\n${String(message.output)}`);
        }
        return;
    }
  });
  return builder.finish();
}

/** A session as it stood when its agent compacted it, and the summary the agent wrote then. */
export interface CompactedSession {
  readonly name: string;
  /** The conversation the agent had when it compacted. */
  readonly input: AnthropicCorpusInput;
  /** The agent's own summary of it: the reference a summary is measured against. */
  readonly reference: string;
}

/**
 * The first compaction of a Claude Code session: the messages before its
 * `compact_boundary` event, and the user message right after it, which is
 * Claude Code's summary. Undefined for a session that never compacted.
 */
export function loadClaudeCodeCompaction(corpusDir: string, file: string): CompactedSession | undefined {
  const events = readJsonLines(file);
  const boundary = events.findIndex((e) => e.type === "system" && e.subtype === "compact_boundary");
  if (boundary < 0) return undefined;
  const summary = (events[boundary + 1]?.message as Json | undefined)?.content;
  if (typeof summary !== "string") return undefined;
  return { name: corpusName(corpusDir, file), input: claudeCodeMessages(file, events.slice(0, boundary)), reference: summary };
}

/** The first compaction of a pi session: the entries before its `compaction` entry and that entry's summary. */
export function loadPiCompaction(corpusDir: string, file: string): CompactedSession | undefined {
  const entries = readJsonLines(file);
  const at = entries.findIndex((e) => e.type === "compaction");
  if (at < 0 || typeof entries[at]!.summary !== "string") return undefined;
  return { name: corpusName(corpusDir, file), input: piMessages(file, entries.slice(0, at)), reference: entries[at]!.summary as string };
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
