import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseConversation } from "../../../src/core/formats/parseConversation.js";
import type { Message } from "../../../src/core/message.js";
import { checkToolPairing } from "../../../src/core/toolPairing.js";
import { corpusDir, listCorpusConversations, loadClaudeCodeSession, loadPiSession } from "../../helpers/corpus.js";

const corpus = listCorpusConversations();

/**
 * Providers want more than "the call came earlier": a message of tool results
 * must answer the message right before it, and a call must be answered by the
 * very next message unless it is the last one.
 */
function adjacencyProblems(messages: readonly Message[]): string[] {
  const problems: string[] = [];
  messages.forEach((message, i) => {
    const previous = messages[i - 1];
    const calls = new Set(previous?.blocks.flatMap((b) => (b.type === "toolCall" ? [b.id] : [])) ?? []);
    const results = new Set(message.blocks.flatMap((b) => (b.type === "toolResult" ? [b.toolCallId] : [])));
    for (const id of results) if (!calls.has(id)) problems.push(`message ${i} answers ${id}, not called by message ${i - 1}`);
    for (const id of calls) if (!results.has(id)) problems.push(`message ${i - 1} calls ${id}, not answered by message ${i}`);
  });
  return problems;
}

describe("the shared corpus", () => {
  it("holds the Claude Code, pi and tau-bench conversations", () => {
    const count = (source: string) => corpus.filter((c) => c.source === source).length;
    expect(count("claude-code")).toBe(10);
    expect(count("pi")).toBe(2);
    expect(count("tau-bench")).toBe(200);
  });

  describe.each(corpus.filter((c) => c.source !== "tau-bench").map((c) => [c.name, c] as const))("%s", (_name, entry) => {
    const parse = () => parseConversation(entry.input);

    it("parses as an Anthropic conversation with no orphan tool results", () => {
      const conversation = parse();
      expect(conversation.format).toBe("anthropic");
      expect(checkToolPairing(conversation.messages).orphanResults).toEqual([]);
    });

    it("answers every tool call in the message right after it", () => {
      expect(adjacencyProblems(parse().messages)).toEqual([]);
    });

    it("gives every message the turn id of the prompt that opened its turn", () => {
      let turnId: string | undefined;
      for (const message of parse().messages) {
        if (message.kind === "user") turnId = message.turnId;
        expect(message.turnId).toBeDefined();
        if (turnId !== undefined) expect(message.turnId).toBe(turnId);
      }
    });
  });

  it("parses every tau-bench trajectory as an OpenAI conversation with valid pairing", () => {
    for (const entry of corpus.filter((c) => c.source === "tau-bench")) {
      const conversation = parseConversation(entry.input);
      expect(conversation.format, entry.name).toBe("openai");
      expect(checkToolPairing(conversation.messages).orphanResults, entry.name).toEqual([]);
      expect(adjacencyProblems(conversation.messages.filter((m) => m.kind !== "system")), entry.name).toEqual([]);
    }
  });
});

describe("loadClaudeCodeSession", () => {
  it("merges the lines of one response, interleaved with its tool results, into one assistant message", () => {
    // In this subagent log three parallel Glob calls of one response are logged
    // as separate lines, with results written between them.
    const { messages } = loadClaudeCodeSession(
      path.join(corpusDir, "spotter-claude-code/6c2214d7-b87e-4432-8e41-22ba294ea584/subagents/agent-afc096d.jsonl"),
    );
    const withThreeCalls = messages.filter(
      (m) => m.role === "assistant" && Array.isArray(m.content) && m.content.filter((b) => (b as { type: string }).type === "tool_use").length === 3,
    );
    expect(withThreeCalls.length).toBeGreaterThan(10);
    // The log has 66 assistant lines carrying 18 distinct message ids.
    expect(messages.filter((m) => m.role === "assistant")).toHaveLength(18);
  });
});

describe("loadPiSession", () => {
  const piFile = (name: string) => path.join(corpusDir, "pi-mono-sessions", name);
  const blocksOf = (content: string | unknown[]) => (Array.isArray(content) ? (content as { type: string; [k: string]: unknown }[]) : []);

  it("merges consecutive tool results into one user message after the call", () => {
    const { messages } = loadPiSession(piFile("before-compaction.jsonl"));
    // The session opens with one response making two parallel read calls.
    expect(messages[1]?.role).toBe("assistant");
    expect(blocksOf(messages[1]?.content ?? []).filter((b) => b.type === "tool_use")).toHaveLength(2);
    expect(blocksOf(messages[2]?.content ?? []).map((b) => b.type)).toEqual(["tool_result", "tool_result"]);
  });

  it("answers calls the user interrupted with an error result, as the agent does before its next request", () => {
    const interrupted = (name: string) =>
      loadPiSession(piFile(name)).messages.flatMap((m) => blocksOf(m.content)).filter((b) => b.type === "tool_result" && String(b.content).includes("interrupted"));
    // Counted in the logs: calls of aborted or failed responses that no toolResult entry answers.
    expect(interrupted("before-compaction.jsonl")).toHaveLength(6);
    expect(interrupted("large-session.jsonl")).toHaveLength(18);
  });

  it("turns commands the user ran into user messages that open a turn", () => {
    const { messages } = loadPiSession(piFile("before-compaction.jsonl"));
    const commands = messages.filter((m) => typeof m.content === "string" && m.content.startsWith("I ran `"));
    expect(commands).toHaveLength(3);
    const parsed = parseConversation({ messages });
    for (const command of commands) expect(parsed.messages[messages.indexOf(command)]?.kind).toBe("user");
  });

  it("converts pi thinking and tool calls into Anthropic blocks", () => {
    const blocks = loadPiSession(piFile("before-compaction.jsonl")).messages.flatMap((m) => blocksOf(m.content));
    const types = new Set(blocks.map((b) => b.type));
    expect(types).toContain("thinking");
    expect(types).toContain("tool_use");
    expect(types).not.toContain("toolCall");
    expect(blocks.find((b) => b.type === "tool_use")).toMatchObject({ id: expect.any(String), name: "read", input: { path: expect.any(String) } });
  });
});
