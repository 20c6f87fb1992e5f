import { describe, expect, it } from "vitest";
import { parseConversation } from "../../src/core/formats/parseConversation.js";
import { buildOfflineSummary, OFFLINE_SUMMARY_TOKENS } from "../../src/core/offlineSummary.js";
import { TokenEstimator } from "../../src/core/tokenEstimator.js";
import { conversation, fillerText, reactTurn } from "../helpers/conversations.js";

/** A small coding session: a write, a failing test run, a fix, a passing run, a decision, a todo list. */
function codingSession() {
  return parseConversation([
    { role: "user", content: "Add a `parse_line/2` to the transcript parser and make the tests pass." },
    {
      role: "assistant",
      content: [
        { type: "text", text: "I will write the parser first." },
        { type: "tool_use", id: "w1", name: "Write", input: { file_path: "lib/spotter/parser.ex", content: `defmodule Spotter.Parser do\n${"  # docs\n".repeat(60)}  def parse_line(line, opts) do\n    :ok\n  end\nend\n` } },
      ],
    },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "w1", content: "File created successfully" }] },
    { role: "assistant", content: [{ type: "tool_use", id: "b1", name: "Bash", input: { command: "mix test" } }] },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "b1", content: "Compiling 3 files\n....F\n297 tests, 11 failures" }] },
    {
      role: "assistant",
      content: [
        { type: "text", text: "The root cause is the unescaped quote in `lex_string/1`. I decided to escape it instead of rewriting the lexer." },
        { type: "tool_use", id: "t1", name: "TodoWrite", input: { todos: [{ content: "Escape quotes", status: "completed" }, { content: "Run the full suite", status: "in_progress" }] } },
      ],
    },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "ok" }] },
    { role: "assistant", content: [{ type: "tool_use", id: "b2", name: "Bash", input: { command: "mix test" } }] },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "b2", content: "297 tests, 0 failures" }] },
    { role: "assistant", content: "All 297 tests pass now." },
  ]).messages;
}

describe("buildOfflineSummary", () => {
  it("says where the work stopped, what failed, what was written and declared, what ran, and what was decided", () => {
    const { text } = buildOfflineSummary({ messages: codingSession(), previousSummary: undefined, budgetTokens: 4_000, capTokens: 4_000 }, new TokenEstimator());
    expect(text).toContain("## Where the work stopped\n- Last reply: All 297 tests pass now.");
    expect(text).toContain("Todo list: [completed] Escape quotes; [in_progress] Run the full suite");
    expect(text).toContain("## Errors (newest first)\n- `mix test` → 297 tests, 11 failures");
    expect(text).not.toMatch(/Errors[^#]*0 failures/);
    expect(text).toContain("lib/spotter/parser.ex (Write); declares Spotter.Parser, parse_line");
    expect(text).toContain("## Code written (newest first)\n- lib/spotter/parser.ex: defmodule Spotter.Parser do");
    expect(text).toContain("`mix test` → 297 tests, 0 failures");
    expect(text).toContain("The root cause is the unescaped quote in `lex_string/1`.");
    expect(text).toContain("`lex_string/1`");
  });

  it("writes a path holding a line break as one escaped path, so it stays one item in this summary and the next", () => {
    const messages = parseConversation([
      { role: "user", content: "Write the two notes." },
      { role: "assistant", content: [{ type: "tool_use", id: "w1", name: "Write", input: { file_path: "notes/a\nb.md", content: "alpha\n" } }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "w1", content: "File created successfully" }] },
      { role: "assistant", content: "Done." },
    ]).messages;
    const estimator = new TokenEstimator();
    const { text } = buildOfflineSummary({ messages, previousSummary: undefined, budgetTokens: 4_000, capTokens: 4_000 }, estimator);
    expect(text).toContain('\n- "notes/a\\nb.md" (Write)');
    expect(text.split("\n").filter((line) => line.startsWith("b.md"))).toEqual([]);
    const next = buildOfflineSummary({ messages: messages.slice(3), previousSummary: text, budgetTokens: 4_000, capTokens: 4_000 }, estimator);
    expect(next.text).toContain('\n- "notes/a\\nb.md" (Write)');
  });

  it("is deterministic", () => {
    const a = buildOfflineSummary({ messages: codingSession(), previousSummary: undefined, budgetTokens: 4_000, capTokens: 4_000 }, new TokenEstimator());
    const b = buildOfflineSummary({ messages: codingSession(), previousSummary: undefined, budgetTokens: 4_000, capTokens: 4_000 }, new TokenEstimator());
    expect(a.text).toBe(b.text);
  });

  it("stays within its budget on a long session and counts the messages it does not stand for", () => {
    const messages = parseConversation(conversation(...Array.from({ length: 12 }, () => reactTurn({ rounds: 6, toolResultChars: 3_000 })))).messages;
    const estimator = new TokenEstimator();
    for (const budget of [1_024, 2_000, 20_000]) {
      const summary = buildOfflineSummary({ messages, previousSummary: undefined, budgetTokens: budget, capTokens: budget }, estimator);
      expect(estimator.countText(summary.text)).toBeLessThanOrEqual(Math.min(budget, OFFLINE_SUMMARY_TOKENS));
      expect(summary.unrepresented.length).toBeGreaterThan(0);
      expect(summary.unrepresented.length).toBeLessThan(messages.length);
    }
  });

  it("merges a previous offline summary section by section instead of nesting it", () => {
    const estimator = new TokenEstimator();
    const session = codingSession();
    const first = buildOfflineSummary({ messages: session.slice(0, 5), previousSummary: undefined, budgetTokens: 4_000, capTokens: 4_000 }, estimator);
    const second = buildOfflineSummary({ messages: session.slice(5), previousSummary: first.text, budgetTokens: 4_000, capTokens: 4_000 }, estimator);
    expect(second.text.match(/## Where the work stopped/g)).toHaveLength(1);
    expect(second.text.match(/## Files changed/g)).toHaveLength(1);
    expect(second.text).not.toContain("## Earlier summary");
    expect(second.text).toContain("lib/spotter/parser.ex (Write)");
    expect(second.text).toContain("Last reply: All 297 tests pass now.");
    expect(second.text).not.toContain("Last reply: I will write the parser first.");
  });

  it("keeps a model's previous summary as the earlier summary, cut only where it outgrows the cap, and says by how much", () => {
    const estimator = new TokenEstimator();
    const previous = `## Goal\nShip the parser.\n\n## Critical Context\n${fillerText(40_000)}`;
    const { text, previousSummaryCharsCut } = buildOfflineSummary(
      { messages: codingSession(), previousSummary: previous, budgetTokens: 3_000, capTokens: 3_000 },
      estimator,
    );
    expect(text).toContain("## Earlier summary\n- ## Goal ⏎ Ship the parser.");
    expect(text).toContain(`[${previousSummaryCharsCut} characters cut]`);
    expect(previousSummaryCharsCut).toBeGreaterThan(25_000);
    expect(estimator.countText(text)).toBeLessThanOrEqual(3_000);
  });

  it("carries every line of a previous offline summary whole, and gives this range's items what it leaves", () => {
    const estimator = new TokenEstimator();
    const session = codingSession();
    const first = buildOfflineSummary({ messages: session.slice(0, 5), previousSummary: undefined, budgetTokens: 4_000, capTokens: 4_000 }, estimator);
    const carried = first.text.split("\n").filter((line) => line.startsWith("- ") && !line.startsWith("- Last"));
    const firstTokens = estimator.countText(first.text);

    const second = buildOfflineSummary({ messages: session.slice(5), previousSummary: first.text, budgetTokens: 50, capTokens: firstTokens + 200 }, estimator);

    for (const line of carried) expect(second.text).toContain(line);
    expect(second.previousSummaryCharsCut).toBe(0);
    expect(estimator.countText(second.text)).toBeLessThanOrEqual(firstTokens + 200);
  });

  it("reports a command by its verdict line, not by whatever the runner printed last", () => {
    const messages = parseConversation([
      { role: "user", content: "run the tests" },
      { role: "assistant", content: [{ type: "tool_use", id: "b1", name: "Bash", input: { command: "mix test" } }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "b1", content: "Compiling 2 files\n.......\nFinished in 1.5 seconds\n14 doctests, 65 tests, 0 failures\n\nRandomized with seed 185158" }] },
    ]).messages;
    const { text } = buildOfflineSummary({ messages, previousSummary: undefined, budgetTokens: 2_000, capTokens: 2_000 }, new TokenEstimator());
    expect(text).toContain("`mix test` → 14 doctests, 65 tests, 0 failures");
    expect(text).not.toContain("Randomized with seed");
  });

  it("shows an edit as the lines it removed and added, not the lines it kept", () => {
    const kept = Array.from({ length: 20 }, (_, i) => `    attribute :field_${i}, :string`).join("\n");
    const messages = parseConversation([
      { role: "user", content: "add the state" },
      {
        role: "assistant",
        content: [
          {
            type: "tool_use",
            id: "e1",
            name: "Edit",
            input: {
              file_path: "lib/annotation.ex",
              old_string: `${kept}\n    validate length(message_ids) > 0`,
              new_string: `${kept}\n    validate message_ids != []\n    attribute :state, :atom, constraints: [one_of: [:open, :closed]]`,
            },
          },
        ],
      },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "e1", content: "ok" }] },
    ]).messages;
    const { text } = buildOfflineSummary({ messages, previousSummary: undefined, budgetTokens: 2_000, capTokens: 2_000 }, new TokenEstimator());
    expect(text).toContain("- lib/annotation.ex: -validate length(message_ids) > 0 +validate message_ids != [] ⏎ attribute :state, :atom, constraints: [one_of: [:open, :closed]]");
    expect(text).not.toContain("field_3");
  });

  it("shows a patch as its removed and added lines", () => {
    const patch = "*** Begin Patch\n*** Update File: src/session.ts\n@@\n context line\n-  unsubscribe() { this.listeners = []; }\n+  unsubscribe() { this.detach(); }\n*** End Patch";
    const messages = parseConversation([
      { role: "user", content: "keep the listeners" },
      { role: "assistant", content: [{ type: "tool_use", id: "p1", name: "apply_patch", input: { path: "src/session.ts", patch } }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "p1", content: "Done" }] },
    ]).messages;
    const { text } = buildOfflineSummary({ messages, previousSummary: undefined, budgetTokens: 2_000, capTokens: 2_000 }, new TokenEstimator());
    expect(text).toContain("- src/session.ts: -unsubscribe() { this.listeners = []; } +unsubscribe() { this.detach(); }");
    expect(text).not.toContain("context line");
  });

  it("lists the backticked names of a plan the agent wrote, several to a line, but not backticks in code", () => {
    const plan = "# Plan\n- Keep `render_message/1` unchanged\n- Add `classify_text_lines/2` and `put_subagent_ref/2`\n- New `to_relative_path/2`";
    const messages = parseConversation([
      { role: "user", content: "plan it" },
      {
        role: "assistant",
        content: [
          { type: "tool_use", id: "w1", name: "Write", input: { file_path: "/home/u/.claude/plans/plan.md", content: plan } },
          { type: "tool_use", id: "w2", name: "Write", input: { file_path: "src/banner.ts", content: "export const banner = (n: string) => `hello_${n}`;\n" } },
        ],
      },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "w1", content: "ok" },
          { type: "tool_result", tool_use_id: "w2", content: "ok" },
        ],
      },
      { role: "assistant", content: [{ type: "tool_use", id: "x1", name: "ExitPlanMode", input: { plan: "Then wire `render/2` into `SessionLive`." } }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "x1", content: "approved" }] },
    ]).messages;
    const { text } = buildOfflineSummary({ messages, previousSummary: undefined, budgetTokens: 2_000, capTokens: 2_000 }, new TokenEstimator());
    const identifiers = text.slice(text.indexOf("## Identifiers"));
    for (const name of ["render_message/1", "classify_text_lines/2", "put_subagent_ref/2", "to_relative_path/2", "render/2", "SessionLive"]) {
      expect(identifiers).toContain(`\`${name}\``);
    }
    expect(identifiers).not.toContain("hello_");
    expect(identifiers.split("\n").filter((l) => l.startsWith("- "))).toHaveLength(1);
  });

  it("merges identifiers with a previous summary's by name", () => {
    const estimator = new TokenEstimator();
    const say = (text: string) => parseConversation([{ role: "user", content: "go" }, { role: "assistant", content: text }]).messages;
    const first = buildOfflineSummary({ messages: say("Use `alpha` and `beta`."), previousSummary: undefined, budgetTokens: 2_000, capTokens: 2_000 }, estimator);
    const second = buildOfflineSummary({ messages: say("Now `beta` and `gamma`."), previousSummary: first.text, budgetTokens: 2_000, capTokens: 2_000 }, estimator);
    const identifiers = second.text.slice(second.text.indexOf("## Identifiers"));
    expect(identifiers.match(/`beta`/g)).toHaveLength(1);
    expect(identifiers).toContain("`alpha`");
    expect(identifiers).toContain("`gamma`");
  });

  it("gives the budget sections leave unused to sections with more to say", () => {
    // Nothing but commands: the sections after them (findings, identifiers) have nothing, and their shares came back to nobody.
    const turns = Array.from({ length: 200 }, (_, i) => [
      { role: "assistant", content: [{ type: "tool_use", id: `b${i}`, name: "Bash", input: { command: `make step_${i}` } }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: `b${i}`, content: `step ${i} built` }] },
    ]).flat();
    const messages = parseConversation([{ role: "user", content: "build everything" }, ...turns]).messages;
    const estimator = new TokenEstimator();
    const budget = 2_000;
    const { text } = buildOfflineSummary({ messages, previousSummary: undefined, budgetTokens: budget, capTokens: budget }, estimator);
    const commands = text.slice(text.indexOf("## Commands run"));
    expect(estimator.countText(commands)).toBeGreaterThan(budget * 0.85);
    expect(estimator.countText(text)).toBeLessThanOrEqual(budget);
  });

  it("shows more of each item when the range has little to say, never at the cost of an item", () => {
    const content = `defmodule Spotter.Annotation do\n${"  # field docs\n".repeat(20)}  has_many :message_refs, Spotter.AnnotationMessageRef\n${"  # more\n".repeat(200)}end\n`;
    const messages = parseConversation([
      { role: "user", content: "add the relation" },
      { role: "assistant", content: [{ type: "tool_use", id: "w1", name: "Write", input: { file_path: "lib/annotation.ex", content } }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "w1", content: "ok" }] },
    ]).messages;
    const estimator = new TokenEstimator();
    // The relation sits past the 144 characters a 240-character excerpt keeps of the head.
    expect(content.indexOf("has_many")).toBeGreaterThan(240);
    const ample = buildOfflineSummary({ messages, previousSummary: undefined, budgetTokens: 4_000, capTokens: 4_000 }, estimator);
    expect(ample.text).toContain("has_many :message_refs, Spotter.AnnotationMessageRef");
    // Fifty such edits do not all fit longer: each keeps the usual excerpt.
    const many = parseConversation(
      Array.from({ length: 50 }, (_, i) => [
        { role: "assistant", content: [{ type: "tool_use", id: `w${i}`, name: "Write", input: { file_path: `lib/a${i}.ex`, content } }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: `w${i}`, content: "ok" }] },
      ]).flat(),
    ).messages;
    const crowded = buildOfflineSummary({ messages: many, previousSummary: undefined, budgetTokens: 4_000, capTokens: 4_000 }, estimator);
    expect(crowded.text).not.toContain("has_many :message_refs");
    expect(estimator.countText(crowded.text)).toBeLessThanOrEqual(4_000);
  });
});
