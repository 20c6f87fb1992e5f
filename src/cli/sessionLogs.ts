/**
 * Agents' own session logs (Claude Code's and pi's JSON Lines), turned into
 * the conversation the agent sent its model, as `parseConversation` takes it.
 *
 * `compactd compact` reads a user's log with them, and the corpus loaders
 * (corpus.ts) read the shared corpus's logs with the same code, so what the
 * tests and benchmarks measure is what a user gets. Every message carries a
 * `turn_id` naming the prompt that opened its turn, so checkpoints work on a
 * log as on any conversation.
 *
 * What the log holds besides messages (progress, snapshots, queue and system
 * events, pi's model changes and compactions) is skipped, as the agent itself
 * does not send it. A line that is not a JSON object, or a message line that
 * is not shaped as its agent writes one, is refused naming its line number:
 * skipping it would silently drop part of the conversation (a live log's last
 * line, cut off mid-write, is refused too, rather than compacted without it).
 */
import path from "node:path";
import { describeJsonSyntaxError, findJsonSyntaxError } from "./jsonSyntaxError.js";
import { UsageError } from "./usageError.js";

export type SessionLogFormat = "claude-code" | "pi";

/** How messages name each format, and what marks a log as one, for a refusal to list. */
export const SESSION_LOG_FORMATS: Readonly<Record<SessionLogFormat, { readonly label: string; readonly marks: string }>> = {
  "claude-code": { label: "a Claude Code session log", marks: 'lines of type "user" or "assistant" carrying a message, a uuid and a sessionId' },
  pi: { label: "a pi session log", marks: 'a first line of type "session" with an id, then entries of type "message"' },
};

/** An Anthropic Messages message as the converters build it. */
export interface SessionMessage {
  readonly role: "user" | "assistant";
  readonly content: string | unknown[];
  readonly turn_id: string;
}

export interface SessionConversation {
  readonly messages: SessionMessage[];
}

type Json = Record<string, unknown>;

/** One line of a log: its number in the file (from 1) and the object it holds. */
export interface LogLine {
  readonly line: number;
  readonly event: Json;
}

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * The lines of a JSON Lines text (`name` is the file, or stdin, for messages),
 * blank ones left out; a line that is not a JSON object is refused naming its
 * line (and column, for a syntax error).
 */
export function parseJsonLines(name: string, text: string): LogLine[] {
  const { lines, refusal } = scanJsonLines(name, text);
  if (refusal !== undefined) throw refusal;
  return lines;
}

function kindOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

/** The object lines of the text, and the refusal of its first line that is not one, if any, so a log's format can be told first. */
function scanJsonLines(name: string, text: string): { readonly lines: LogLine[]; readonly refusal?: UsageError } {
  const lines: LogLine[] = [];
  let refusal: UsageError | undefined;
  text.split("\n").forEach((source, index) => {
    if (source.trim() === "") return;
    const line = index + 1;
    let event: unknown;
    try {
      event = JSON.parse(source);
    } catch (err) {
      const error = findJsonSyntaxError(source);
      const where = error === undefined ? `line ${line} (${(err as Error).message.replace(/\s+/g, " ")})` : describeJsonSyntaxError(source, error, line);
      refusal ??= new UsageError(`${name}: not valid JSON Lines at ${where}`);
      return;
    }
    if (isObject(event)) lines.push({ line, event });
    else refusal ??= new UsageError(`${name}: line ${line} holds ${kindOf(event)}, not an object as every line of a session log does`);
  });
  return { lines, refusal };
}

/** Which agent wrote the log, by what its lines hold (not by the file's name), or undefined when neither did. */
function sessionLogFormat(lines: readonly LogLine[]): SessionLogFormat | undefined {
  const first = lines[0]?.event;
  if (first?.type === "session" && typeof first.id === "string") return "pi";
  const isClaudeCodeMessage = ({ event }: LogLine) =>
    (event.type === "user" || event.type === "assistant") &&
    isObject(event.message) &&
    typeof event.uuid === "string" &&
    typeof event.sessionId === "string";
  return lines.some(isClaudeCodeMessage) ? "claude-code" : undefined;
}

/**
 * A session log's text as the conversation its agent sent the model, and the
 * format it was read as; a UsageError when it is neither format, naming both.
 */
export function readSessionLog(name: string, text: string): { readonly format: SessionLogFormat; readonly conversation: SessionConversation } {
  const { lines, refusal } = scanJsonLines(name, text);
  const format = sessionLogFormat(lines);
  if (format === undefined) {
    const expected = Object.values(SESSION_LOG_FORMATS).map((f) => `${f.label} (${f.marks})`);
    throw new UsageError(
      `${name}: holds one JSON value per line (JSON Lines) but is not a session log compactd reads: expected ${expected.join(" or ")}; or one conversation as JSON: {"system"?, "messages": […]} or a message array`,
    );
  }
  if (refusal !== undefined) throw refusal;
  const convert = format === "pi" ? piMessages : claudeCodeMessages;
  return { format, conversation: convert(name, lines) };
}

function isToolResultBlock(block: unknown): boolean {
  return isObject(block) && block.type === "tool_result";
}

function toolUseIds(content: readonly unknown[]): string[] {
  return content.flatMap((block) => (isObject(block) && block.type === "tool_use" && typeof block.id === "string" ? [block.id] : []));
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
  readonly messages: SessionMessage[] = [];
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
  finish(): SessionConversation {
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

/** The turn id of messages before the log's first prompt: the session's file name, as the agent names the session by it. */
function firstTurnId(name: string): string {
  return `${path.basename(name).replace(/\.jsonl?$/, "")}:start`;
}

/** The message content of a log line, held to the shapes its agent writes: a string (when `text` allows) or an array of objects. */
function contentOf(name: string, logLine: LogLine, message: Json, what: string, text: false): Json[];
function contentOf(name: string, logLine: LogLine, message: Json, what: string, text: boolean): string | Json[];
function contentOf(name: string, { line }: LogLine, message: Json, what: string, text: boolean): string | Json[] {
  const content = message.content;
  if (text && typeof content === "string") return content;
  if (Array.isArray(content) && content.every(isObject)) return content;
  throw new UsageError(`${name}: line ${line}: ${what}'s message.content must be ${text ? "a string or " : ""}an array of content blocks (objects)`);
}

function messageOf(name: string, { line, event }: LogLine, what: string): Json {
  if (!isObject(event.message)) throw new UsageError(`${name}: line ${line}: ${what} has no message object`);
  return event.message;
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
 */
export function claudeCodeMessages(name: string, lines: readonly LogLine[]): SessionConversation {
  const builder = new AnthropicMessageBuilder(firstTurnId(name));
  for (const logLine of lines) {
    const { event } = logLine;
    if (event.type === "assistant") {
      const message = messageOf(name, logLine, "an assistant line");
      builder.assistantBlocks(String(message.id ?? event.uuid), contentOf(name, logLine, message, "an assistant line", false));
    } else if (event.type === "user") {
      const content = contentOf(name, logLine, messageOf(name, logLine, "a user line"), "a user line", true);
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

function piContent(content: string | Json[]): string | unknown[] {
  return typeof content === "string" ? content : content.map(piBlock);
}

/**
 * A pi coding-agent session (`type: "message"` entries; roles user, assistant,
 * toolResult, and bashExecution for commands the user ran). pi keeps one
 * message per tool result; consecutive ones become one user message of
 * tool_result blocks. Assistant entries with no content (a request aborted
 * before any output) are skipped: there was nothing to send back.
 */
export function piMessages(name: string, lines: readonly LogLine[]): SessionConversation {
  const builder = new AnthropicMessageBuilder(firstTurnId(name));
  for (const logLine of lines) {
    const { line, event } = logLine;
    if (event.type !== "message") continue;
    const message = messageOf(name, logLine, "a message entry");
    const entryId = typeof event.id === "string" ? event.id : `line-${line}`;
    const content = (what: string, text: boolean) => piContent(contentOf(name, logLine, message, what, text));
    switch (message.role) {
      case "user":
        builder.prompt(entryId, content("a user entry", true));
        break;
      case "assistant":
        builder.assistantBlocks(entryId, content("an assistant entry", false) as unknown[]);
        break;
      case "toolResult":
        builder.toolResults([
          { type: "tool_result", tool_use_id: message.toolCallId, content: content("a toolResult entry", true), is_error: message.isError === true },
        ]);
        break;
      case "bashExecution":
        if (message.excludeFromContext !== true) {
          builder.prompt(entryId, `I ran \`${String(message.command)}\` (exit code ${String(message.exitCode)}):\n${String(message.output)}`);
        }
        break;
    }
  }
  return builder.finish();
}
