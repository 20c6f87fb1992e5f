import { describe, expect, it } from "vitest";
import { parseConversation } from "../../src/core/formats/parseConversation.js";
import { clip, serializeMessage, serializeMessages, TEXT_CHARS, THINKING_CHARS, TOOL_ARGUMENT_CHARS, TOOL_RESULT_CHARS } from "../../src/core/serialize.js";

function serialized(raw: unknown[]): string[] {
  return parseConversation(raw).messages.map(serializeMessage);
}

describe("serializeMessage", () => {
  it("labels each block with its role and shows tool calls as name(arg=value)", () => {
    const lines = serialized([
      { role: "user", content: "fix the parser" },
      {
        role: "assistant",
        content: [
          { type: "thinking", thinking: "the bug is in the lexer", signature: "s" },
          { type: "text", text: "Reading it." },
          { type: "tool_use", id: "t1", name: "read_file", input: { path: "src/lexer.ts", limit: 40 } },
        ],
      },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "export const x = 1;", is_error: true }, { type: "text", text: "also check tests" }] },
    ]);
    expect(lines).toEqual([
      "[User]: fix the parser",
      '[Assistant thinking]: the bug is in the lexer\n[Assistant]: Reading it.\n[Assistant tool call]: read_file(path="src/lexer.ts", limit=40)',
      "[Tool result (error)]: export const x = 1;\n[User]: also check tests",
    ]);
  });

  it("clips tool results, text, thinking and arguments, saying how much was left out", () => {
    const big = "x".repeat(50_000);
    const [request, call, result] = serialized([
      { role: "user", content: big },
      { role: "assistant", content: [{ type: "thinking", thinking: big, signature: "s" }, { type: "tool_use", id: "t1", name: "write_file", input: { path: "a.ts", content: big } }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: big }] },
    ]);
    expect(request).toBe(`[User]: ${clip(big, TEXT_CHARS)}`);
    expect(request).toContain(`[${50_000 - TEXT_CHARS} more characters]`);
    expect(call).toContain(`[${50_000 - THINKING_CHARS} more characters]`);
    expect(call).toContain(`content="${"x".repeat(TOOL_ARGUMENT_CHARS)}" … [${50_000 - TOOL_ARGUMENT_CHARS} more characters]`);
    expect(result).toBe(`[Tool result]: ${clip(big, TOOL_RESULT_CHARS)}`);
  });

  it("names images, documents and unknown blocks instead of dumping them", () => {
    const [line] = serialized([
      {
        role: "user",
        content: [
          { type: "image", source: { type: "base64", media_type: "image/png", data: "AAAA" } },
          { type: "future_block", payload: { a: 1 } },
        ],
      },
    ]);
    expect(line).toBe("[User image]\n[User future_block block]");
  });

  it("joins messages oldest first, one per line group", () => {
    const conv = parseConversation([
      { role: "user", content: "one" },
      { role: "assistant", content: "two" },
    ]);
    expect(serializeMessages(conv.messages)).toBe("[User]: one\n[Assistant]: two");
  });
});
