/**
 * `compactd compact` on an agent's own session log: real Claude Code and pi
 * sessions from the shared corpus, read where they lie, compact as the
 * conversation their agent sent the model; other JSON Lines and broken logs
 * are refused naming what was expected and where.
 */
import { readFileSync } from "node:fs";
import { mkdtemp, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { parseConversation } from "../../src/core/formats/parseConversation.js";
import { userRequestsOf } from "../../src/core/pinnedRequests.js";
import { corpusDir, loadClaudeCodeSession, loadPiSession } from "../helpers/corpus.js";
import { runCli } from "../helpers/runCli.js";

const noKey = { ANTHROPIC_API_KEY: "" };
const compact = (file: string, stdin?: string) => runCli(["compact", file, "--context-window", "200000", "--summarizer", "offline"], { env: noKey, stdin });

const claudeCodeLog = path.join(corpusDir, "spotter-claude-code/258c7280-ae70-4798-800f-63464d01a85d.jsonl");
const piLog = path.join(corpusDir, "pi-mono-sessions/large-session.jsonl");

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "compactd-session-logs-"));
});

/** A text a person reads in a message: a string, or its text blocks. */
function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  return (content as { type: string; text?: string }[]).map((b) => (b.type === "text" ? b.text : "")).join("\n");
}

describe.each([
  { format: "a Claude Code session log", log: claudeCodeLog, load: loadClaudeCodeSession },
  { format: "a pi session log", log: piLog, load: loadPiSession },
])("compactd compact on $format", ({ format, log, load }) => {
  let fromLog: Awaited<ReturnType<typeof runCli>>;
  let fromJson: Awaited<ReturnType<typeof runCli>>;
  const converted = load(log);

  beforeAll(async () => {
    const exported = path.join(dir, `${path.basename(log, ".jsonl")}.json`);
    await writeFile(exported, JSON.stringify(converted));
    [fromLog, fromJson] = await Promise.all([compact(log), compact(exported)]);
  }, 60_000);

  it("reads the log by its content, says which format it read, and compacts it", () => {
    expect(fromLog.code).toBe(0);
    expect(fromLog.stderr).toBe(`compactd: ${log}: read as ${format}: the ${converted.messages.length} messages its agent sent the model\n`);
    const out = JSON.parse(fromLog.stdout);
    expect(out.tokensAfter).toBeLessThan(out.tokensBefore);
    expect(out.messages.at(-1)).toEqual(converted.messages.at(-1));
  });

  it("gives the result the same conversation exported as JSON gives", () => {
    expect(fromJson.code).toBe(0);
    expect(fromJson.stderr).toBe("");
    expect(JSON.parse(fromLog.stdout)).toEqual(JSON.parse(fromJson.stdout));
  });

  it("keeps the user's first and newest requests, pinned after the summary or in the tail", () => {
    const requests = userRequestsOf(parseConversation(converted).messages).map((r) => r.text);
    expect(requests.length).toBeGreaterThan(0);
    const out = JSON.parse(fromLog.stdout) as { summary: string; messages: { content: unknown }[] };
    const kept = [out.summary, ...out.messages.map((m) => textOf(m.content))].join("\n");
    for (const request of new Set([requests[0]!, requests.at(-1)!])) expect(kept).toContain(request);
  });
});

describe("compactd compact reading session logs", () => {
  it("reads one from stdin and among a directory's .jsonl files", async () => {
    const piText = readFileSync(piLog, "utf8");
    const stdin = await compact("-", piText);
    expect(stdin.code).toBe(0);
    expect(stdin.stderr).toMatch(/^compactd: stdin: read as a pi session log: /);

    const sessions = await mkdtemp(path.join(dir, "project-"));
    await symlink(piLog, path.join(sessions, "session.jsonl"));
    const run = await compact(sessions);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ file: path.join(sessions, "session.jsonl"), status: "compacted" });
  }, 60_000);

  it("refuses JSON Lines of another shape, naming the two formats it reads", async () => {
    const file = path.join(dir, "events.jsonl");
    await writeFile(file, '{"event":"start","at":1}\n{"event":"stop","at":2}\n');
    const run = await compact(file);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.stderr).toMatch(new RegExp(`^compactd: ${file}: holds one JSON value per line \\(JSON Lines\\) but is not a session log compactd reads: `));
    expect(run.stderr).toContain("expected a Claude Code session log (");
    expect(run.stderr).toContain(") or a pi session log (");
    expect(run.stderr.trim().split("\n")).toHaveLength(1);
  });

  const piHead = readFileSync(piLog, "utf8").split("\n").slice(0, 6);
  it.each([
    ["a line cut off mid-write", [...piHead, '{"type":"message","message":{"role":"user","content":"fix th'], /: not valid JSON Lines at line 7, column 61: expected a closing ", found the end of the line$/m],
    ["a line that is not an object", [...piHead.slice(0, 3), "[]", ...piHead.slice(3)], /: line 4 holds an array, not an object as every line of a session log does$/m],
    [
      "a message whose content is neither text nor blocks",
      [...piHead.slice(0, 2), '{"type":"message","message":{"role":"assistant","content":"hello"}}', ...piHead.slice(2)],
      /: line 3: an assistant entry's message.content must be an array of content blocks \(objects\)$/m,
    ],
  ])("refuses a session log with %s, naming its line, with exit 2", async (_, lines, message) => {
    const file = path.join(dir, "broken.jsonl");
    await writeFile(file, `${lines.join("\n")}\n`);
    const run = await compact(file);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.stderr).toMatch(message);
    expect(run.stderr.startsWith(`compactd: ${file}: `)).toBe(true);
    expect(run.stderr.trim().split("\n")).toHaveLength(1);
  });
});
