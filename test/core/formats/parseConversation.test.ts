import { describe, expect, it } from "vitest";
import { detectFormat, parseConversation } from "../../../src/core/formats/parseConversation.js";
import { conversation, reactTurn } from "../../helpers/conversations.js";

function invalidAt(field: string, message: RegExp) {
  return expect.objectContaining({ code: "invalid_conversation", field, message: expect.stringMatching(message) });
}

const user = (content: unknown) => ({ role: "user", content });
const assistant = (content: unknown) => ({ role: "assistant", content });

describe("detectFormat", () => {
  it.each([
    ["a top-level system field", { system: "be brief", messages: [user("hi")] }, "anthropic"],
    ["a tool_use block", [user("hi"), assistant([{ type: "tool_use", id: "a", name: "f", input: {} }])], "anthropic"],
    ["a tool_result block", [user([{ type: "tool_result", tool_use_id: "a" }])], "anthropic"],
    ["a thinking block", [user("hi"), assistant([{ type: "thinking", thinking: "hm", signature: "s" }])], "anthropic"],
    ["a redacted_thinking block", [user("hi"), assistant([{ type: "redacted_thinking", data: "x" }])], "anthropic"],
    ["an image with a source", [user([{ type: "image", source: { type: "url", url: "https://x/y.png" } }])], "anthropic"],
    ["a document block", [user([{ type: "document", source: { type: "text", data: "d" } }])], "anthropic"],
    ["a tool message", [{ role: "tool", tool_call_id: "a", content: "x" }], "openai"],
    ["a system message", [{ role: "system", content: "be brief" }, user("hi")], "openai"],
    ["a developer message", [{ role: "developer", content: "be brief" }, user("hi")], "openai"],
    ["tool_calls", [user("hi"), { role: "assistant", content: null, tool_calls: [] }], "openai"],
    ["an image_url part", [user([{ type: "image_url", image_url: { url: "https://x/y.png" } }])], "openai"],
    ["nothing but user and assistant strings (written the same in both shapes)", [user("hi"), assistant("hello")], "anthropic"],
    ["no messages at all", { messages: [] }, "anthropic"],
  ])("decides on %s", (_name, input, format) => {
    expect(detectFormat(input)).toBe(format);
  });

  it("looks past the first message for evidence", () => {
    const input = [...Array.from({ length: 50 }, (_, i) => (i % 2 === 0 ? user(`q${i}`) : assistant(`a${i}`))), { role: "tool", tool_call_id: "x", content: "" }];
    expect(detectFormat(input)).toBe("openai");
  });

  it("rejects a conversation that mixes both shapes, naming both fields", () => {
    const input = { system: "s", messages: [user("hi"), { role: "tool", tool_call_id: "a", content: "x" }] };
    expect(() => detectFormat(input)).toThrow(invalidAt("messages[1].role", /OpenAI.*system.*Anthropic/));
  });
});

describe("parseConversation", () => {
  it("accepts a bare message array and an object with messages", () => {
    const messages = conversation(reactTurn({ rounds: 2 }));
    expect(parseConversation(messages).messages).toHaveLength(messages.length);
    expect(parseConversation({ messages }).messages).toHaveLength(messages.length);
  });

  it("returns every input message as its own raw object, in order", () => {
    const messages = conversation(reactTurn({ rounds: 3, parallelCalls: 2 }), reactTurn({ rounds: 1 }));
    const parsed = parseConversation({ messages }).messages;
    parsed.forEach((message, i) => {
      expect(message.raw).toBe(messages[i]);
      expect(message.index).toBe(i);
    });
  });

  it("does not modify the input", () => {
    const input = { system: [{ type: "text", text: "sys" }], messages: conversation(reactTurn({ rounds: 2, thinking: true })) };
    const snapshot = structuredClone(input);
    parseConversation(input);
    expect(input).toEqual(snapshot);
  });

  it("keeps a top-level system value untouched and reads its text", () => {
    const system = [
      { type: "text", text: "You are terse.", cache_control: { type: "ephemeral" } },
      { type: "text", text: "Use tools." },
    ];
    const parsed = parseConversation({ system, messages: [user("hi")] });
    expect(parsed.system).toBe(system);
    expect(parsed.systemText).toBe("You are terse.\nUse tools.");
    expect(parseConversation({ system: "plain", messages: [] }).systemText).toBe("plain");
  });

  it("has no system value or text when there is no top-level system", () => {
    const parsed = parseConversation([{ role: "system", content: "sys" }, user("hi")]);
    expect(parsed.system).toBeUndefined();
    expect(parsed.systemText).toBe("");
    expect(parsed.messages[0]?.kind).toBe("system");
  });

  it("parses a conversation in each shape into the same kinds", () => {
    for (const format of ["anthropic", "openai"] as const) {
      const parsed = parseConversation(reactTurn({ format, rounds: 2, parallelCalls: 2 }));
      expect(parsed.format).toBe(format);
      const kinds = parsed.messages.map((m) => m.kind);
      if (format === "anthropic") expect(kinds).toEqual(["user", "assistant", "toolResult", "assistant", "toolResult", "assistant"]);
      else {
        expect(kinds).toEqual(["user", "assistant", "toolResult", "toolResult", "assistant", "toolResult", "toolResult", "assistant"]);
      }
    }
  });

  it("reads turn ids from each message", () => {
    const parsed = parseConversation(conversation(reactTurn({ rounds: 1, turnId: "t1" }), reactTurn({ rounds: 0, turnId: 2 }), reactTurn({ rounds: 0 })));
    expect(parsed.messages.map((m) => m.turnId)).toEqual(["t1", "t1", "t1", "t1", "2", "2", undefined, undefined]);
  });

  it("parses the summary message the core adds as a user message in both shapes", () => {
    const summary = { role: "user", content: "<summary>\nGoal: ...\n</summary>" };
    expect(parseConversation([summary], "anthropic").messages[0]?.kind).toBe("user");
    expect(parseConversation([summary], "openai").messages[0]?.kind).toBe("user");
    expect(parseConversation([{ role: "system", content: "s" }, summary]).messages[1]?.kind).toBe("user");
  });

  it("accepts calls that are not answered yet: the agent may be mid-round", () => {
    for (const format of ["anthropic", "openai"] as const) {
      const parsed = parseConversation(reactTurn({ format, rounds: 2, endsWith: "toolCalls" }), format);
      expect(parsed.messages.at(-1)?.kind).toBe("assistant");
    }
  });

  describe("rejects", () => {
    it.each([
      ["input that is neither an array nor an object", "hello", "input", /array of messages or an object/],
      ["null input", null, "input", /got null/],
      ["an object without messages", { system: "s" }, "messages", /must be an array of messages, got nothing/],
      ["messages that are not an array", { messages: { 0: user("x") } }, "messages", /got an object/],
      ["a message that is not an object", [user("hi"), 7], "messages[1]", /must be an object, got a number/],
      ["a system of the wrong type", { system: 3, messages: [] }, "system", /string or an array of text blocks/],
      ["a system block that is not text", { system: [{ type: "image", source: {} }], messages: [] }, "system[0]", /text blocks/],
    ])("%s", (_name, input, field, message) => {
      expect(() => parseConversation(input)).toThrow(invalidAt(field, message));
    });

    it("an Anthropic tool result whose call does not appear earlier, naming the id and the block", () => {
      const input = [
        user("go"),
        assistant([{ type: "tool_use", id: "toolu_known", name: "f", input: {} }]),
        user([
          { type: "tool_result", tool_use_id: "toolu_known", content: "ok" },
          { type: "tool_result", tool_use_id: "toolu_ghost", content: "??" },
        ]),
      ];
      expect(() => parseConversation(input)).toThrow(invalidAt("messages[2].content[1].tool_use_id", /"toolu_ghost".*no matching tool call earlier/));
    });

    it("a tool result that comes before its call", () => {
      const input = [
        user([{ type: "tool_result", tool_use_id: "toolu_late", content: "x" }]),
        assistant([{ type: "tool_use", id: "toolu_late", name: "f", input: {} }]),
      ];
      expect(() => parseConversation(input)).toThrow(invalidAt("messages[0].content[0].tool_use_id", /toolu_late/));
    });

    it("an OpenAI tool message whose call does not appear earlier", () => {
      const input = [{ role: "system", content: "s" }, user("go"), { role: "tool", tool_call_id: "call_ghost", content: "x" }];
      expect(() => parseConversation(input)).toThrow(invalidAt("messages[2].tool_call_id", /"call_ghost"/));
    });

    it("an explicit anthropic format for an OpenAI conversation, naming the field", () => {
      const input = [user("hi"), { role: "assistant", content: null, tool_calls: [] }];
      expect(() => parseConversation(input, "anthropic")).toThrow(invalidAt("messages[1].tool_calls", /OpenAI shape, but format "anthropic"/));
    });

    it("an explicit openai format for an Anthropic conversation, naming the field", () => {
      expect(() => parseConversation({ system: "s", messages: [] }, "openai")).toThrow(invalidAt("system", /Anthropic shape, but format "openai"/));
      const input = [user("hi"), assistant([{ type: "thinking", thinking: "t", signature: "s" }])];
      expect(() => parseConversation(input, "openai")).toThrow(invalidAt("messages[1].content[0].type", /thinking block is Anthropic/));
    });

    it("a format that is neither auto, anthropic nor openai", () => {
      expect(() => parseConversation([], "gemini" as "auto")).toThrow(invalidAt("format", /"gemini"/));
    });

    it("a system role in a conversation declared Anthropic", () => {
      const input = { system: "s", messages: [{ role: "system", content: "x" }] };
      expect(() => parseConversation(input, "anthropic")).toThrow(invalidAt("messages[0].role", /role "system" is OpenAI shape, but format "anthropic"/));
    });
  });
});
