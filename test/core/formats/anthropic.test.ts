import { describe, expect, it } from "vitest";
import { parseAnthropicMessage } from "../../../src/core/formats/anthropic.js";

describe("parseAnthropicMessage", () => {
  it("reads string content as one text block", () => {
    const message = parseAnthropicMessage({ role: "user", content: "hello" }, 0);
    expect(message.kind).toBe("user");
    expect(message.blocks).toEqual([{ type: "text", text: "hello" }]);
  });

  it("keeps the very object it was given as raw, unchanged", () => {
    const raw = { role: "assistant", content: [{ type: "text", text: "hi", citations: null }], extra: { keep: true } };
    const snapshot = structuredClone(raw);
    const message = parseAnthropicMessage(raw, 4);
    expect(message.raw).toBe(raw);
    expect(message.index).toBe(4);
    expect(raw).toEqual(snapshot);
  });

  it("normalizes text, thinking, tool_use, image and document blocks", () => {
    const message = parseAnthropicMessage(
      {
        role: "assistant",
        content: [
          { type: "thinking", thinking: "let me look", signature: "sig" },
          { type: "text", text: "Reading." },
          { type: "tool_use", id: "toolu_1", name: "read", input: { path: "a.ts" } },
        ],
      },
      0,
    );
    expect(message.kind).toBe("assistant");
    expect(message.blocks).toEqual([
      { type: "thinking", text: "let me look" },
      { type: "text", text: "Reading." },
      { type: "toolCall", id: "toolu_1", name: "read", input: { path: "a.ts" } },
    ]);

    const user = parseAnthropicMessage(
      {
        role: "user",
        content: [
          { type: "image", source: { type: "base64", media_type: "image/png", data: "AAAA" } },
          { type: "document", source: { type: "text", media_type: "text/plain", data: "plain text doc" } },
          { type: "document", source: { type: "base64", media_type: "application/pdf", data: "JVBER" } },
        ],
      },
      1,
    );
    expect(user.blocks).toEqual([
      { type: "media", media: "image" },
      { type: "media", media: "document", text: "plain text doc" },
      { type: "media", media: "document" },
    ]);
  });

  it("passes redacted thinking, server tool blocks and unknown blocks through as opaque JSON", () => {
    const blocks = [
      { type: "redacted_thinking", data: "EncryptedBlob" },
      { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: { query: "q" } },
      { type: "web_search_tool_result", tool_use_id: "srvtoolu_1", content: [] },
      { type: "mcp_tool_use", id: "mcptoolu_1", name: "x", server_name: "s", input: {} },
      { type: "block_from_the_future", payload: [1, 2] },
    ];
    const message = parseAnthropicMessage({ role: "assistant", content: blocks }, 0);
    expect(message.blocks).toEqual(blocks.map((block) => ({ type: "opaque", blockType: block.type, json: JSON.stringify(block) })));
  });

  it("makes server tool blocks no pairing constraint: they are neither calls nor results", () => {
    const message = parseAnthropicMessage(
      { role: "assistant", content: [{ type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: {} }] },
      0,
    );
    expect(message.blocks.some((b) => b.type === "toolCall" || b.type === "toolResult")).toBe(false);
  });

  it("reads tool results with string, block-array and missing content, and their error flag", () => {
    const message = parseAnthropicMessage(
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "a", content: "done" },
          {
            type: "tool_result",
            tool_use_id: "b",
            is_error: true,
            content: [
              { type: "text", text: "line 1" },
              { type: "image", source: { type: "base64", media_type: "image/png", data: "AA" } },
              { type: "text", text: "line 2" },
            ],
          },
          { type: "tool_result", tool_use_id: "c" },
        ],
      },
      0,
    );
    expect(message.kind).toBe("toolResult");
    expect(message.blocks).toEqual([
      { type: "toolResult", toolCallId: "a", text: "done", isError: false },
      { type: "toolResult", toolCallId: "b", text: "line 1\nline 2", isError: true },
      { type: "media", media: "image" },
      { type: "toolResult", toolCallId: "c", text: "", isError: false },
    ]);
  });

  it("calls a user message with a tool result and text a tool-result message", () => {
    const message = parseAnthropicMessage(
      {
        role: "user",
        content: [
          { type: "text", text: "<reminder>files changed</reminder>" },
          { type: "tool_result", tool_use_id: "a", content: "ok" },
        ],
      },
      0,
    );
    expect(message.kind).toBe("toolResult");
  });

  it("parses the summary message the core adds as a user message", () => {
    const message = parseAnthropicMessage({ role: "user", content: "<summary>earlier work</summary>" }, 0);
    expect(message.kind).toBe("user");
    expect(message.blocks).toEqual([{ type: "text", text: "<summary>earlier work</summary>" }]);
  });

  it("reads turn_id as a string, numbers included", () => {
    expect(parseAnthropicMessage({ role: "user", content: "a", turn_id: "t-7" }, 0).turnId).toBe("t-7");
    expect(parseAnthropicMessage({ role: "user", content: "a", turn_id: 42 }, 0).turnId).toBe("42");
    expect(parseAnthropicMessage({ role: "user", content: "a" }, 0).turnId).toBeUndefined();
  });

  describe("rejects", () => {
    it.each([
      ["a message that is not an object", "hello", "messages[2]", /must be an object, got a string/],
      ["a system role, pointing at the top-level system field", { role: "system", content: "x" }, "messages[2].role", /top-level "system"/],
      ["an unknown role", { role: "tool", content: "x" }, "messages[2].role", /unknown role "tool"/],
      ["a missing role", { content: "x" }, "messages[2].role", /missing role/],
      ["content of the wrong type", { role: "user", content: 5 }, "messages[2].content", /string or an array/],
      ["missing content", { role: "user" }, "messages[2].content", /got nothing/],
      ["a block without a type", { role: "user", content: [{ text: "x" }] }, "messages[2].content[0].type", /string type/],
      ["a block that is not an object", { role: "user", content: ["x"] }, "messages[2].content[0]", /must be an object/],
      ["a text block without text", { role: "user", content: [{ type: "text" }] }, "messages[2].content[0].text", /must be a string/],
      [
        "a tool_use without an id",
        { role: "assistant", content: [{ type: "tool_use", name: "read", input: {} }] },
        "messages[2].content[0].id",
        /tool_use block needs a non-empty string id/,
      ],
      [
        "a tool_result without a tool_use_id",
        { role: "user", content: [{ type: "tool_result", content: "x" }] },
        "messages[2].content[0].tool_use_id",
        /tool_result block needs/,
      ],
      [
        "a tool_result with content of the wrong type",
        { role: "user", content: [{ type: "tool_result", tool_use_id: "a", content: 3 }] },
        "messages[2].content[0].content",
        /string or an array/,
      ],
      [
        "a tool_use in a user message",
        { role: "user", content: [{ type: "tool_use", id: "a", name: "read", input: {} }] },
        "messages[2].content[0].type",
        /assistant messages/,
      ],
      [
        "a tool_result in an assistant message",
        { role: "assistant", content: [{ type: "tool_result", tool_use_id: "a" }] },
        "messages[2].content[0].type",
        /user messages/,
      ],
      ["a turn_id of the wrong type", { role: "user", content: "x", turn_id: { id: 1 } }, "messages[2].turn_id", /string or a number/],
    ])("%s", (_name, raw, field, message) => {
      expect(() => parseAnthropicMessage(raw, 2)).toThrow(
        expect.objectContaining({ code: "invalid_conversation", field, message: expect.stringMatching(message) }),
      );
    });
  });
});
