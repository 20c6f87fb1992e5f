import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { conversation, reactTurn } from "../helpers/conversations.js";
import { startFakeAnthropic, type FakeAnthropic } from "../helpers/fakeAnthropic.js";
import { repoRoot } from "../helpers/repoRoot.js";
import { stderrOnTerminal } from "../helpers/onTerminal.js";
import { runCli } from "../helpers/runCli.js";

let fake: FakeAnthropic;
let dir: string;

beforeAll(async () => {
  fake = await startFakeAnthropic({ script: () => ({ kind: "reply", text: "## Goal\nExplain the cut point." }) });
  dir = await mkdtemp(path.join(tmpdir(), "compactd-demo-"));
  await writeFile(path.join(dir, "long.json"), JSON.stringify(conversation(...Array.from({ length: 6 }, () => reactTurn({ rounds: 5, toolResultChars: 3_000 })))));
  await writeFile(path.join(dir, "short.json"), JSON.stringify(reactTurn({ rounds: 1 })));
});

afterAll(() => fake.close());

/** The table's row for `name`, its cells trimmed. */
function row(stdout: string, name: string): string[] {
  const line = stdout.split("\n").find((l) => l.startsWith(`│ ${name} `));
  expect(line, `a row for ${name}`).toBeDefined();
  return line!.split("│").slice(1, -1).map((cell) => cell.trim());
}

describe("compactd demo", () => {
  it("compacts the bundled session and a directory's files through the service with real summaries, and exits 0", async () => {
    const run = await runCli(["demo", dir], { env: { ANTHROPIC_API_KEY: "sk-test", ANTHROPIC_BASE_URL: fake.url, COMPACTD_MODEL: "claude-demo-1" } });
    expect(run.stderr).not.toMatch(/offline/);
    expect(run.code).toBe(0);
    // stdout is the report alone: no log lines in the way.
    expect(run.stdout).not.toMatch(/^\{/m);

    const session = JSON.parse(await readFile(path.join(repoRoot, "examples/session.json"), "utf8")) as { messages: unknown[] };
    const bundled = row(run.stdout, "examples/session");
    expect(bundled[1]).toMatch(new RegExp(`^${session.messages.length} → \\d+$`));
    for (const name of ["examples/session", "long"]) {
      const [, messages, tokens, summarizer, degraded, queue, worker, callback] = row(run.stdout, name);
      const [before, after] = tokens!.split(" → ").map(Number);
      expect(after).toBeLessThan(before!);
      expect(Number(messages!.split(" → ")[1])).toBeLessThan(Number(messages!.split(" → ")[0]));
      expect([summarizer, degraded, callback]).toEqual(["anthropic", "no", "verified"]);
      expect(queue).toMatch(/^\d+\.\d\d s$/);
      expect(worker).toMatch(/^\d+\.\d\d s$/);
    }
    expect(run.stdout).toContain("nothing to compact (all within the recent-tokens budget): short\n");
    expect(run.stdout).not.toContain("│ short ");

    expect(run.stdout).toContain("3 conversations: 2 compacted (0 degraded), 1 nothing to compact, 0 failed");
    expect(run.stdout).toContain("callbacks: 3 of 3 arrived with a valid signature (2 compaction, 1 batch.completed)");
    expect(run.stdout).toMatch(/^the summarizer used [1-9]\d* input and [1-9]\d* output tokens$/m);
    expect(run.stdout).toMatch(/^ {2}compactd_jobs_total\{reason="manual",outcome="completed"\} 2$/m);
    expect(run.stdout).toMatch(/^ {2}compactd_tokens_before_count 2$/m);
    // Not a terminal: progress comes as plain lines, ending with everything done.
    expect(run.stderr).toMatch(/^compactd demo: 2\/2 done, 0 queued, 0 running, 0 degraded$/m);
    expect(fake.requests.length).toBeGreaterThanOrEqual(2);
  }, 180_000);

  it("says in one line that it uses the offline summarizer without a key", async () => {
    const run = await runCli(["demo", dir], { env: { ANTHROPIC_API_KEY: "" } });
    expect(run.code).toBe(0);
    expect(run.stderr.match(/ANTHROPIC_API_KEY is not set; using the offline summarizer/g)).toHaveLength(1);
    expect(row(run.stdout, "long")[3]).toBe("offline");
    expect(run.stdout).toContain("3 conversations: 2 compacted (0 degraded), 1 nothing to compact, 0 failed");
    expect(run.stdout).not.toMatch(/the summarizer used/);
  }, 180_000);

  it("shows a live progress bar on stderr when stderr is a terminal", async () => {
    const screen = await stderrOnTerminal(["demo", dir], { ANTHROPIC_API_KEY: "" });
    expect(screen).toMatch(/2\/2 done \| 0 queued \| 0 running \| \d+ degraded/);
    expect(screen).not.toMatch(/^compactd demo: \d+\/\d+ done,/m);
  }, 180_000);

  it("refuses a directory that is not there, in one line", async () => {
    const run = await runCli(["demo", path.join(dir, "missing")]);
    expect(run.code).toBe(2);
    expect(run.stderr.trim()).toBe(`compactd: ${path.join(dir, "missing")}: no such directory`);
  });

  it("reads its files as compact does, naming a session log in JSON Lines as such, before starting anything", async () => {
    const logs = await mkdtemp(path.join(tmpdir(), "compactd-demo-jsonl-"));
    const file = path.join(logs, "session.json");
    await writeFile(file, '{"type":"user","message":{"role":"user","content":"hi"}}\n{"type":"assistant"}\n');
    const run = await runCli(["demo", logs]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(new RegExp(`^compactd: ${file}: holds one JSON value per line \\(JSON Lines`));
    expect(run.stderr.trim().split("\n")).toHaveLength(1);
  });
});
