import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseConversation } from "../../src/core/formats/parseConversation.js";
import type { Block, Message } from "../../src/core/message.js";
import { checkToolPairing } from "../../src/core/toolPairing.js";
import { conversation, reactConversationArbitrary, reactTurn } from "../helpers/conversations.js";

function message(index: number, kind: Message["kind"], blocks: Block[]): Message {
  return { index, raw: {}, kind, blocks, turnId: undefined };
}
const call = (id: string): Block => ({ type: "toolCall", id, name: "f", input: {} });
const result = (id: string): Block => ({ type: "toolResult", toolCallId: id, text: "", isError: false });

describe("checkToolPairing", () => {
  it("reports nothing for a conversation whose calls are all answered", () => {
    for (const format of ["anthropic", "openai"] as const) {
      const parsed = parseConversation(conversation(reactTurn({ format, rounds: 4, parallelCalls: 3 }), reactTurn({ format, rounds: 2 })), format);
      expect(checkToolPairing(parsed.messages)).toEqual({ orphanResults: [], unansweredCalls: [] });
    }
  });

  it("reports the calls of a round that has not been answered yet, with their message index", () => {
    const parsed = parseConversation(reactTurn({ format: "openai", rounds: 2, parallelCalls: 2, endsWith: "toolCalls" }));
    const last = parsed.messages.at(-1);
    const ids = last?.blocks.flatMap((b) => (b.type === "toolCall" ? [b.id] : [])) ?? [];
    expect(ids).toHaveLength(2);
    expect(checkToolPairing(parsed.messages)).toEqual({
      orphanResults: [],
      unansweredCalls: ids.map((toolCallId) => ({ index: last?.index, toolCallId })),
    });
  });

  it("reports a result whose call is missing as an orphan", () => {
    const messages = [message(0, "assistant", [call("a")]), message(1, "toolResult", [result("a"), result("b")])];
    expect(checkToolPairing(messages)).toEqual({ orphanResults: [{ index: 1, toolCallId: "b" }], unansweredCalls: [] });
  });

  it("reports a result that comes before its call as an orphan and the call as unanswered", () => {
    const messages = [message(0, "toolResult", [result("a")]), message(1, "assistant", [call("a")])];
    expect(checkToolPairing(messages)).toEqual({
      orphanResults: [{ index: 0, toolCallId: "a" }],
      unansweredCalls: [{ index: 1, toolCallId: "a" }],
    });
  });

  it("does not let a message answer its own call", () => {
    const messages = [message(0, "assistant", [call("a"), result("a")])];
    expect(checkToolPairing(messages)).toEqual({
      orphanResults: [{ index: 0, toolCallId: "a" }],
      unansweredCalls: [{ index: 0, toolCallId: "a" }],
    });
  });

  it("reports indexes as Message.index, so a slice of a conversation can be checked", () => {
    const parsed = parseConversation(reactTurn({ rounds: 3 }));
    // Dropping the first round's call leaves its result orphaned in the tail.
    const tail = parsed.messages.slice(2);
    const orphan = checkToolPairing(tail).orphanResults;
    expect(orphan).toHaveLength(1);
    expect(orphan[0]?.index).toBe(2);
  });
});

describe("generated ReAct conversations", () => {
  it("always parse in their shape with every call answered", () => {
    fc.assert(
      fc.property(reactConversationArbitrary(), (generated) => {
        const parsed = parseConversation(generated.input, generated.format);
        expect(parsed.messages.map((m) => m.raw)).toEqual(generated.messages);
        expect(checkToolPairing(parsed.messages)).toEqual({ orphanResults: [], unansweredCalls: [] });
      }),
      { numRuns: 300 },
    );
  });

  it("leave only the last round's calls unanswered when they may stop mid-round", () => {
    fc.assert(
      fc.property(reactConversationArbitrary({ pendingCalls: true, maxRounds: 6 }), (generated) => {
        const parsed = parseConversation(generated.input, generated.format);
        const { orphanResults, unansweredCalls } = checkToolPairing(parsed.messages);
        expect(orphanResults).toEqual([]);
        const lastIndex = parsed.messages.length - 1;
        for (const call of unansweredCalls) expect(call.index).toBe(lastIndex);
      }),
      { numRuns: 200 },
    );
  });

  it("cover the features the property tests rely on", () => {
    const seen = new Set<string>();
    fc.sample(reactConversationArbitrary({ pendingCalls: true }), { numRuns: 200, seed: 7 }).forEach((generated) => {
      const parsed = parseConversation(generated.input, generated.format);
      seen.add(`format:${parsed.format}`);
      if (parsed.system !== undefined) seen.add("system");
      for (const m of parsed.messages) {
        const calls = m.blocks.filter((b) => b.type === "toolCall").length;
        if (calls > 1) seen.add("parallel");
        if (m.turnId !== undefined) seen.add("turnId");
        if (m.kind === "toolResult" && m.blocks.some((b) => b.type === "text")) seen.add("mixedText");
        for (const b of m.blocks) {
          seen.add(`block:${b.type}`);
          if (b.type === "toolResult" && b.text.length > 15_000) seen.add("largeResult");
          if (b.type === "toolResult" && b.text.length < 60) seen.add("tinyResult");
        }
      }
      if (checkToolPairing(parsed.messages).unansweredCalls.length > 0) seen.add("pending");
      const rounds = parsed.messages.filter((m) => m.kind === "assistant" && m.blocks.some((b) => b.type === "toolCall")).length;
      if (rounds >= 30) seen.add("manyRounds");
    });
    expect([...seen].sort()).toEqual(
      [
        "format:anthropic",
        "format:openai",
        "system",
        "parallel",
        "turnId",
        "mixedText",
        "block:text",
        "block:thinking",
        "block:toolCall",
        "block:toolResult",
        "block:media",
        "block:opaque",
        "largeResult",
        "tinyResult",
        "pending",
        "manyRounds",
      ].sort(),
    );
  });
});
