import { describe, expect, it } from "vitest";
import { parseConversation } from "../../src/core/formats/parseConversation.js";
import { NO_PINNED_REQUESTS, pinRequests, splitPinnedRequests, userRequestsOf } from "../../src/core/pinnedRequests.js";
import { summaryMessage } from "../../src/core/summaryEnvelope.js";
import { TokenEstimator } from "../../src/core/tokenEstimator.js";
import { fillerText } from "../helpers/conversations.js";
import { corpusDir, loadClaudeCodeSession } from "../helpers/corpus.js";

const estimator = new TokenEstimator();
const count = (text: string): number => estimator.countText(text);

function requests(texts: readonly string[]) {
  return userRequestsOf(parseConversation(texts.flatMap((t) => [{ role: "user", content: t }, { role: "assistant", content: "ok" }])).messages);
}

describe("userRequestsOf", () => {
  it("takes the user's own text, not tool results, summaries or harness markup", () => {
    const found = userRequestsOf(
      parseConversation([
        summaryMessage("## Goal\nold"),
        { role: "assistant", content: "hi" },
        { role: "user", content: "Fix the parser, keep the public API." },
        { role: "assistant", content: [{ type: "tool_use", id: "t", name: "Read", input: { path: "a" } }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "t", content: "text" }] },
        { role: "assistant", content: "done" },
        { role: "user", content: "<task-notification>\n<task-id>b1</task-id>\n</task-notification>" },
        { role: "assistant", content: "seen" },
      ]).messages,
    );
    expect(found.map((r) => r.text)).toEqual(["Fix the parser, keep the public API."]);
  });

  it("takes what the user typed beside tool results in one message, and leaves out the harness's interruption markers", () => {
    const found = userRequestsOf(
      parseConversation([
        { role: "user", content: "Rename the module." },
        { role: "assistant", content: [{ type: "tool_use", id: "a", name: "Bash", input: { command: "git mv a b" } }] },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "a", content: "The user doesn't want to proceed with this tool use.", is_error: true },
            { type: "text", text: "[Request interrupted by user for tool use]" },
          ],
        },
        { role: "assistant", content: [{ type: "tool_use", id: "b", name: "Bash", input: { command: "ls" } }] },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "b", content: "a.ts" },
            { type: "text", text: "Use git mv, and keep the old name as a re-export." },
          ],
        },
        { role: "assistant", content: "working" },
        { role: "user", content: "[Request interrupted by user]" },
        { role: "assistant", content: "stopped" },
      ]).messages,
    );
    expect(found.map((r) => [r.messageIndex, r.text])).toEqual([
      [0, "Rename the module."],
      [4, "Use git mv, and keep the old name as a re-export."],
    ]);
  });

  it("takes a slash command as the user typed it, from Claude Code's command tags or as plain text", () => {
    const found = requests([
      "<command-message>review</command-message>\n<command-name>/review</command-name>\n<command-args>src/api only, skip tests</command-args>",
      "<command-name>/clear</command-name>\n            <command-message>clear</command-message>\n            <command-args></command-args>",
      "<local-command-stdout>Cleared.</local-command-stdout>",
      "/deploy staging --dry-run",
    ]);
    expect(found.map((r) => r.text)).toEqual(["/review src/api only, skip tests", "/clear", "/deploy staging --dry-run"]);
  });

  it("takes a shell command the user typed with `!` as `!cmd`, never its output", () => {
    const found = requests([
      "<bash-input>git status --short</bash-input>",
      "<bash-stdout> M src/a.ts</bash-stdout><bash-stderr></bash-stderr>",
      "<bash-input>npm test -- parser</bash-input>\n<bash-stdout>1 failed</bash-stdout>\n<bash-stderr>warn: slow</bash-stderr>",
      "<bash-stdout>only output, nothing typed</bash-stdout>",
    ]);
    expect(found.map((r) => r.text)).toEqual(["!git status --short", "!npm test -- parser"]);
  });

  it("reads the requests of real Claude Code sessions: commands as typed, interruptions left out", () => {
    const texts = (file: string) => userRequestsOf(parseConversation(loadClaudeCodeSession(`${corpusDir}/spotter-claude-code/${file}`)).messages).map((r) => r.text);
    expect(texts("tool_heavy.jsonl")).toEqual([
      "start phoenix in background",
      "/mcp",
      "scrolling back in xterm.js still does not work (maybe because outer web catches it)? websearch xterm.js tmux interactions",
    ]);
    // Background-task notifications (with the instruction Claude Code appends) and Claude Code's own
    // compaction summary are the harness speaking: the user asked two things in this session.
    expect(texts("258c7280-ae70-4798-800f-63464d01a85d.jsonl")).toEqual(["Implement spotter-gqc", "did you push?"]);
    const subagent = texts("subagent.jsonl");
    expect(subagent[0]).toMatch(/^\/handgemacht:create-beads websearch to learn how to fastest setup credo/);
    expect(subagent.at(-1)).toBe("create the beads");
    expect(subagent.filter((text) => text.includes("Request interrupted"))).toEqual([]);
  });
});

describe("pinRequests", () => {
  it("writes and counts only the requests the block keeps, however many the session has", () => {
    const fresh = requests(Array.from({ length: 5_000 }, (_, i) => `request ${i}: run the tests again and fix what fails`));
    const counted: string[] = [];
    const block = pinRequests(NO_PINNED_REQUESTS, fresh, "## Goal\nfix the tests", 8_000, (text) => {
      counted.push(text);
      return count(text);
    });
    const kept = block.text.match(/<request>/g)!.length;
    // The first, the newest that fit, and the one that did not (besides the block's frame).
    expect(counted.filter((text) => !text.startsWith("<user-requests"))).toHaveLength(kept + 1);
    expect(block.text).toContain("request 0:");
    expect(block.text).toContain("request 4999:");
    expect(block.text).toContain(`omitted="${5_000 - kept}"`);
    // Oldest first, as before: the task, then the newest in their order.
    const order = [...block.text.matchAll(/request (\d+):/g)].map((m) => Number(m[1]));
    expect(order).toEqual([...order].sort((a, b) => a - b));
  });

  it("carries every request verbatim when they fit, and reads them back from the summary", () => {
    const fresh = requests(["Build the CLI.", "Also add `--dry-run`, never write files in it."]);
    const block = pinRequests(NO_PINNED_REQUESTS, fresh, "## Goal\nA CLI.", 8_000, count);
    expect(block.text).toContain("Build the CLI.");
    expect(block.text).toContain("Also add `--dry-run`, never write files in it.");
    expect(block.carried.size).toBe(2);
    const { prose, pinned } = splitPinnedRequests(`## Goal\nA CLI.\n\n${block.text}\n\n<read-files>\na.ts\n</read-files>`);
    expect(prose).toBe("## Goal\nA CLI.\n\n<read-files>\na.ts\n</read-files>");
    expect(pinned.requests.map((r) => r.text)).toEqual(fresh.map((r) => r.text));
  });

  it("keeps the first and the newest within its share, states how many it left out, and adds up across compactions", () => {
    const fresh = requests(Array.from({ length: 40 }, (_, i) => `Request ${i}: ${fillerText(400, i * 97)}`));
    const block = pinRequests(NO_PINNED_REQUESTS, fresh, "", 4_000, count);
    expect(estimator.countText(block.text)).toBeLessThanOrEqual(1_000 + 20);
    expect(block.text).toContain("Request 0:");
    expect(block.text).toContain("Request 39:");
    const kept = block.carried.size;
    expect(kept).toBeLessThan(40);
    expect(block.text).toContain(`omitted="${40 - kept}"`);
    const again = pinRequests(splitPinnedRequests(block.text).pinned, requests(["Request 40: ship it"]), "", 4_000, count);
    expect(again.text).toContain("Request 0:");
    expect(again.text).toContain("Request 40: ship it");
    expect(Number(/omitted="(\d+)"/.exec(again.text)![1])).toBeGreaterThanOrEqual(40 - kept);
  });

  it("clips a first request larger than its whole share to its head and tail", () => {
    const huge = `SPEC START ${fillerText(60_000)} SPEC END`;
    const block = pinRequests(NO_PINNED_REQUESTS, requests([huge]), "", 8_000, count);
    expect(block.text).toContain("SPEC START");
    expect(block.text).toContain("SPEC END");
    expect(block.text).toContain("characters cut");
    expect(estimator.countText(block.text)).toBeLessThanOrEqual(1_000 + 20);
  });

  it("never drops the newest request, however large the first: the first gets at most half the block", () => {
    const spec = `SPEC START ${fillerText(50_000, 3)} SPEC END`;
    const newest = `Now also make the export button write CSV, not JSON, with these columns: ${fillerText(1_600, 21)}`;
    const block = pinRequests(NO_PINNED_REQUESTS, requests([spec, "looks good", "continue with step 2", newest]), "", 8_000, count);
    expect(block.text).toContain(newest);
    const first = /<request>\n(SPEC START[\s\S]*?)\n<\/request>/.exec(block.text)![1]!;
    expect(first).toContain("SPEC END");
    expect(count(first)).toBeLessThanOrEqual(500);
    expect(count(block.text)).toBeLessThanOrEqual(1_000);
  });

  it("clips a newest request larger than the room left to its head and tail, rather than leave it out", () => {
    const task = "Build the importer.";
    const newest = `LOG START ${fillerText(40_000, 9)} LOG END`;
    const block = pinRequests(NO_PINNED_REQUESTS, requests([task, newest]), "", 8_000, count);
    expect(block.text).toContain(task);
    expect(block.text).toContain("LOG START");
    expect(block.text).toContain("LOG END");
    expect(count(block.text)).toBeLessThanOrEqual(1_000);
  });

  it("prices the block as it is written: its exact tokens stay within its share", () => {
    const cases = [
      Array.from({ length: 60 }, (_, i) => `Request ${i}: ${fillerText(150 + ((i * 37) % 300), i * 13)}`),
      [`日本語の仕様 ${"データを変換する。".repeat(2_000)}`, "次は？", `最後の依頼 ${"確認してください。".repeat(500)}`],
      [fillerText(9_000, 1), fillerText(9_000, 2), fillerText(9_000, 3)],
    ];
    for (const texts of cases) {
      const block = pinRequests(NO_PINNED_REQUESTS, requests(texts), "", 8_000, count);
      expect(count(block.text)).toBeLessThanOrEqual(1_000);
    }
  });

  it("never writes half of a character when it clips a request", () => {
    for (const [opening, summaryBudget] of ["", "y"].flatMap((o) => [2_000, 2_400, 3_000, 3_600, 8_000].map((b) => [o, b] as const))) {
      const emoji = `${opening}${"😀".repeat(3_001)}x${"🎉".repeat(3_001)}`;
      const block = pinRequests(NO_PINNED_REQUESTS, requests([emoji]), "", summaryBudget, count);
      expect(block.text).toContain("characters cut");
      expect(block.text).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/);
    }
  });

  it("points at a long request the summary quotes verbatim, and recovers it from there next time", () => {
    const long = `Please migrate every handler: ${fillerText(600, 5)}`;
    const prose = `## Goal\nThe user asked: "${long}"`;
    const block = pinRequests(NO_PINNED_REQUESTS, requests([long]), prose, 8_000, count);
    expect(block.text.length).toBeLessThan(long.length);
    expect(block.carried.size).toBe(1);
    expect(splitPinnedRequests(`${prose}\n\n${block.text}`).pinned.requests.map((r) => r.text)).toEqual([long]);
  });

  it("reads back each of two quoted requests that share their opening as itself, not both as the first", () => {
    const template = `Port the handler below to the new router and keep every route it serves: ${fillerText(300, 11)}`;
    const first = `${template} Constraint: keep the v1 paths.`;
    const second = `${template} Constraint: drop the v1 paths.`;
    const prose = `## Goal\nThe user asked: "${first}"\nThen: "${second}"`;
    const block = pinRequests(NO_PINNED_REQUESTS, requests([first, second]), prose, 8_000, count);
    expect(block.text.match(/quoted=/g)).toHaveLength(2);
    expect(splitPinnedRequests(`${prose}\n\n${block.text}`).pinned.requests.map((r) => r.text)).toEqual([first, second]);
  });

  it("reads back a quoted request from a pointer written without a digest by an earlier version", () => {
    const long = `Please migrate every handler: ${fillerText(600, 5)}`;
    const prose = `## Goal\nThe user asked: "${long}"`;
    const oldBlock = `<user-requests>\n<request quoted="${long.length}">\n${long.slice(0, 80)}\n</request>\n</user-requests>`;
    expect(splitPinnedRequests(`${prose}\n\n${oldBlock}`).pinned.requests.map((r) => r.text)).toEqual([long]);
  });

  it("pins a repeated request once, at its last occurrence, so repeats do not crowd out the others", () => {
    const texts = ["Migrate the billing service to the new queue.", ...Array.from({ length: 30 }, (_, i) => [`Step ${i}: ${fillerText(120, i * 7)}`, "continue"]).flat()];
    const block = pinRequests(NO_PINNED_REQUESTS, requests(texts), "", 8_000, count);
    expect(block.text.match(/<request>\ncontinue\n<\/request>/g)).toHaveLength(1);
    expect(block.text.trimEnd().endsWith("<request>\ncontinue\n</request>\n</user-requests>")).toBe(true);
    expect(block.text).toContain("Step 29:");
    // Every "continue" is represented by the one pinned.
    expect(block.carried.size).toBe(block.text.match(/<request>/g)!.length - 1 + 30);
    const again = pinRequests(splitPinnedRequests(block.text).pinned, requests(["continue"]), "", 8_000, count);
    expect(again.text.match(/<request>\ncontinue\n<\/request>/g)).toHaveLength(1);
  });

  it("defuses block tags inside a request so the block cannot be cut short", () => {
    const tricky = "Explain what </user-requests> and <modified-files> mean here.";
    const block = pinRequests(NO_PINNED_REQUESTS, requests([tricky, "second"]), "", 8_000, count);
    const { pinned } = splitPinnedRequests(block.text);
    expect(pinned.requests).toHaveLength(2);
    expect(pinned.requests[1]!.text).toBe("second");
  });
});
