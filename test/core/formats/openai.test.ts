import { describe, expect, it } from "vitest";
import { parseOpenAIMessage } from "../../../src/core/formats/openai.js";

describe("parseOpenAIMessage", () => {
  it.each([
    ["system", "system"],
    ["developer", "system"],
    ["user", "user"],
    ["assistant", "assistant"],
  ])("gives role %s the kind %s", (role, kind) => {
    const message = parseOpenAIMessage({ role, content: "text" }, 0);
    expect(message.kind).toBe(kind);
    expect(message.blocks).toEqual([{ type: "text", text: "text" }]);
  });

  it("keeps the very object it was given as raw, unchanged", () => {
    const raw = {
      role: "assistant",
      content: null,
      tool_calls: [{ id: "call_1", type: "function", function: { name: "read", arguments: '{"path":"a.ts"}' } }],
      annotations: [],
    };
    const snapshot = structuredClone(raw);
    const message = parseOpenAIMessage(raw, 3);
    expect(message.raw).toBe(raw);
    expect(message.index).toBe(3);
    expect(raw).toEqual(snapshot);
  });

  it("reads tool calls, parsing JSON arguments and keeping invalid JSON as the string", () => {
    const message = parseOpenAIMessage(
      {
        role: "assistant",
        content: "Reading two files.",
        tool_calls: [
          { id: "call_1", type: "function", function: { name: "read", arguments: '{"path":"a.ts"}' } },
          { id: "call_2", type: "function", function: { name: "read", arguments: '{"path": "b.ts"' } },
          { id: "call_3", type: "custom", custom: { name: "apply_patch", input: "*** Begin Patch" } },
        ],
      },
      0,
    );
    expect(message.kind).toBe("assistant");
    expect(message.blocks).toEqual([
      { type: "text", text: "Reading two files." },
      { type: "toolCall", id: "call_1", name: "read", input: { path: "a.ts" } },
      { type: "toolCall", id: "call_2", name: "read", input: '{"path": "b.ts"' },
      { type: "toolCall", id: "call_3", name: "apply_patch", input: "*** Begin Patch" },
    ]);
  });

  it("accepts null assistant content and reads a refusal", () => {
    expect(parseOpenAIMessage({ role: "assistant", content: null }, 0).blocks).toEqual([]);
    expect(parseOpenAIMessage({ role: "assistant", content: null, refusal: "I can't help with that." }, 0).blocks).toEqual([
      { type: "text", text: "I can't help with that." },
    ]);
  });

  it("makes a tool message a tool result for its tool_call_id", () => {
    const message = parseOpenAIMessage({ role: "tool", tool_call_id: "call_1", content: "file contents" }, 0);
    expect(message.kind).toBe("toolResult");
    expect(message.blocks).toEqual([{ type: "toolResult", toolCallId: "call_1", text: "file contents", isError: false }]);
    const parts = parseOpenAIMessage(
      { role: "tool", tool_call_id: "call_2", content: [{ type: "text", text: "a" }, { type: "text", text: "b" }] },
      0,
    );
    expect(parts.blocks).toEqual([{ type: "toolResult", toolCallId: "call_2", text: "a\nb", isError: false }]);
  });

  it("normalizes content parts and keeps unknown parts opaque", () => {
    const unknown = { type: "part_from_the_future", value: 1 };
    const message = parseOpenAIMessage(
      {
        role: "user",
        content: [
          { type: "text", text: "look" },
          { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } },
          { type: "input_audio", input_audio: { data: "AAAA", format: "wav" } },
          { type: "file", file: { file_id: "file-1" } },
          { type: "refusal", refusal: "no" },
          unknown,
        ],
      },
      0,
    );
    expect(message.blocks).toEqual([
      { type: "text", text: "look" },
      { type: "media", media: "image" },
      { type: "media", media: "document" },
      { type: "media", media: "document" },
      { type: "text", text: "no" },
      { type: "opaque", blockType: "part_from_the_future", json: JSON.stringify(unknown) },
    ]);
  });

  it("parses the summary message the core adds as a user message", () => {
    const message = parseOpenAIMessage({ role: "user", content: "<summary>earlier work</summary>" }, 0);
    expect(message.kind).toBe("user");
  });

  it("reads turn_id as a string, numbers included", () => {
    expect(parseOpenAIMessage({ role: "tool", tool_call_id: "c", content: "x", turn_id: "t1" }, 0).turnId).toBe("t1");
    expect(parseOpenAIMessage({ role: "user", content: "x", turn_id: 9 }, 0).turnId).toBe("9");
  });

  describe("rejects", () => {
    it.each([
      ["a message that is not an object", null, "messages[1]", /must be an object, got null/],
      ["an unknown role", { role: "model", content: "x" }, "messages[1].role", /unknown role "model"/],
      ["the legacy function role, naming its replacement", { role: "function", name: "f", content: "x" }, "messages[1].role", /"tool" messages/],
      ["null user content", { role: "user", content: null }, "messages[1].content", /got null/],
      ["content of the wrong type", { role: "system", content: { text: "x" } }, "messages[1].content", /string or an array/],
      ["a part without a type", { role: "user", content: [{ text: "x" }] }, "messages[1].content[0].type", /string type/],
      ["tool_calls that are not an array", { role: "assistant", content: null, tool_calls: {} }, "messages[1].tool_calls", /array of tool calls/],
      [
        "a tool call without an id",
        { role: "assistant", content: null, tool_calls: [{ type: "function", function: { name: "f", arguments: "{}" } }] },
        "messages[1].tool_calls[0].id",
        /tool call needs a non-empty string id/,
      ],
      [
        "a tool call without a function",
        { role: "assistant", content: null, tool_calls: [{ id: "c", type: "function" }] },
        "messages[1].tool_calls[0].function",
        /must be an object/,
      ],
      [
        "a tool call function without a name",
        { role: "assistant", content: null, tool_calls: [{ id: "c", type: "function", function: { arguments: "{}" } }] },
        "messages[1].tool_calls[0].function.name",
        /must be a string/,
      ],
      ["a tool message without tool_call_id", { role: "tool", content: "x" }, "messages[1].tool_call_id", /tool message needs/],
    ])("%s", (_name, raw, field, message) => {
      expect(() => parseOpenAIMessage(raw, 1)).toThrow(
        expect.objectContaining({ code: "invalid_conversation", field, message: expect.stringMatching(message) }),
      );
    });
  });
});
