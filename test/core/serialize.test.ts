import { describe, expect, it } from "vitest";
import { parseConversation } from "../../src/core/formats/parseConversation.js";
import { clip, clipMiddle } from "../../src/core/clipText.js";
import { serializeMessage, serializeMessages, TEXT_CHARS, THINKING_CHARS, TOOL_ARGUMENT_CHARS, TOOL_RESULT_CHARS } from "../../src/core/serialize.js";

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
    expect(call).toContain(`[${50_000 - THINKING_CHARS} characters cut]`);
    expect(call).toContain(`content="${"x".repeat(TOOL_ARGUMENT_CHARS)}" … [${50_000 - TOOL_ARGUMENT_CHARS} more characters]`);
    expect(result).toBe(`[Tool result]: ${clipMiddle(big, TOOL_RESULT_CHARS)}`);
  });

  it("clips at the lengths the README states: tool results 3,000 characters, text 4,000, thinking and each argument 1,000", () => {
    expect({ TOOL_RESULT_CHARS, TEXT_CHARS, THINKING_CHARS, TOOL_ARGUMENT_CHARS }).toEqual({
      TOOL_RESULT_CHARS: 3_000,
      TEXT_CHARS: 4_000,
      THINKING_CHARS: 1_000,
      TOOL_ARGUMENT_CHARS: 1_000,
    });
  });

  it("keeps a long tool result's head and its verdict at the end, marking the cut", () => {
    const output = `Running 297 tests\n${"test/some_test.exs:12 ok\n".repeat(200)}297 tests, 11 failures`;
    const [, result] = serialized([
      { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "bash", input: { command: "mix test" } }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: output }] },
    ]);
    expect(result).toContain("Running 297 tests");
    expect(result).toContain("297 tests, 11 failures");
    expect(result).toContain(`[${output.length - TOOL_RESULT_CHARS} characters cut]`);
    expect(result!.length).toBeLessThan(TOOL_RESULT_CHARS + 100);
  });

  it("keeps a long thinking block's conclusion", () => {
    const thinking = `Let me look at the parser. ${"Considering options. ".repeat(200)}So the fix is to escape the quote in lex_string/2.`;
    const [line] = serialized([{ role: "assistant", content: [{ type: "thinking", thinking, signature: "s" }] }]);
    expect(line).toContain("Let me look at the parser.");
    expect(line).toContain("escape the quote in lex_string/2.");
    expect(line!.length).toBeLessThan(THINKING_CHARS + 100);
  });

  it("lists the names a long written file declares past the cut", () => {
    const code = [
      "defmodule Spotter.Parser do",
      `  @moduledoc """\n${"  Parses transcript lines.\n".repeat(Math.ceil(TOOL_ARGUMENT_CHARS / 26))}  """`,
      "  def parse_line(line, opts) do",
      "    :ok",
      "  end",
      "  defp tokenize(text), do: String.split(text)",
      "end",
      "export async function loadSession(file: string) {}",
      "class TranscriptIndex:",
    ].join("\n");
    const [call] = serialized([
      { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "Write", input: { file_path: "lib/spotter/parser.ex", content: code } }] },
    ]);
    expect(call).toContain(`[${code.length - TOOL_ARGUMENT_CHARS} more characters; declares parse_line, tokenize, loadSession, TranscriptIndex]`);
  });

  it("keeps an edit's whole new text when it is the size of a typical edit", () => {
    // The line the agent added sits past the first few hundred characters, where the old clip cut it.
    const newString = `${"  attribute :title, :string\n".repeat(25)}  has_many :annotation_refs, Spotter.Transcripts.AnnotationMessageRef\n`;
    expect(newString.length).toBeGreaterThan(700);
    expect(newString.length).toBeLessThanOrEqual(TOOL_ARGUMENT_CHARS);
    const [call] = serialized([
      { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "Edit", input: { file_path: "lib/a.ex", old_string: "x", new_string: newString } }] },
    ]);
    expect(call).toContain("has_many :annotation_refs, Spotter.Transcripts.AnnotationMessageRef");
    expect(call).not.toContain("more characters");
  });

  it("keeps a task description of a few thousand characters whole", () => {
    // A tracker's issue text: the names it asks for sit in its middle, which a head-and-tail clip at 2,000 cut.
    const spec = `Title: Transcript annotations\n${"Context paragraph about the panel. ".repeat(45)}\nEvents: subagent_reference_clicked, transcript_text_selected\n${"More context. ".repeat(70)}`;
    expect(spec.length).toBeGreaterThan(2_500);
    expect(spec.length).toBeLessThanOrEqual(TOOL_RESULT_CHARS);
    const [, result] = serialized([
      { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "Bash", input: { command: "bd show spotter-gqc" } }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: spec }] },
    ]);
    expect(result).toBe(`[Tool result]: ${spec}`);
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
