/**
 * What `compactd compact` does when its result cannot be written: the reader
 * of the pipe went away (`compactd compact big.json | head -c 200`), or the
 * file stdout is redirected to cannot take it (a full disk, here /dev/full).
 * Real child processes with real pipes and a real full device, as a shell
 * gives them.
 */
import { spawn } from "node:child_process";
import { closeSync, openSync } from "node:fs";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { conversation, reactTurn } from "../helpers/conversations.js";
import { startFakeAnthropic, type FakeAnthropic } from "../helpers/fakeAnthropic.js";
import { cliPath } from "../helpers/runCli.js";
import { repoRoot } from "../helpers/repoRoot.js";

const FILES = 6;
let dir: string;
let fake: FakeAnthropic;
const session = conversation(...Array.from({ length: 8 }, () => reactTurn({ rounds: 2, toolResultChars: 3_000 })));
const compactArgs = (target: string) => ["compact", target, "--context-window", "100000", "--keep-recent-tokens", "2000"];

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "compactd-cli-output-"));
  await Promise.all(Array.from({ length: FILES }, (_, i) => writeFile(path.join(dir, `session-${i}.json`), JSON.stringify(session))));
  fake = await startFakeAnthropic();
});

afterAll(async () => {
  await fake?.close();
});

interface Exit {
  readonly code: number | null;
  readonly stderr: string;
}

/** Runs the CLI with stdout a pipe (whose reader closes its end before anything is written) or a file descriptor. */
function run(args: readonly string[], stdout: "pipe" | number, env: NodeJS.ProcessEnv): Promise<Exit> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cliPath, ...args], { cwd: repoRoot, env: { ...process.env, ...env }, stdio: ["ignore", stdout, "pipe"] });
    child.stdout?.destroy();
    let stderr = "";
    child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stderr }));
  });
}

describe("compactd compact when its output cannot be written", () => {
  it("stops quietly when the reader closes the pipe, with the status of a tool stopped by SIGPIPE", async () => {
    const file = path.join(dir, "session-0.json");
    const exit = await run([...compactArgs(file), "--summarizer", "offline"], "pipe", {});
    expect(exit.stderr).toBe("");
    expect(exit.code).toBe(141);
  });

  it("stops a directory run when the reader goes away, instead of summarizing files whose results no one reads", async () => {
    const before = fake.requests.length;
    const exit = await run(compactArgs(dir), "pipe", { ANTHROPIC_API_KEY: "sk-test", ANTHROPIC_BASE_URL: fake.url });
    expect(exit.stderr).toBe("");
    expect(exit.code).toBe(141);
    // Each file's cut falls inside a turn, so it takes two summarization requests (the history and the turn's prefix): 12 for
    // the directory. The run stops at the first line it cannot write, cancelling the next file's requests if they have begun.
    const requests = fake.requests.length - before;
    expect(requests).toBeGreaterThanOrEqual(2);
    expect(requests).toBeLessThanOrEqual(4);
  });

  it("prints the version and help the same way", async () => {
    for (const args of [["--version"], ["compact", "--help"]]) {
      const exit = await run(args, "pipe", {});
      expect(exit.stderr, args.join(" ")).toBe("");
      expect(exit.code, args.join(" ")).toBe(141);
    }
  });

  it("lets the demo finish its run, then exits as the reader left it", async () => {
    const demoDir = await mkdtemp(path.join(tmpdir(), "compactd-cli-output-demo-"));
    await writeFile(path.join(demoDir, "session.json"), JSON.stringify(session));
    const exit = await run(["demo", demoDir], "pipe", { ANTHROPIC_API_KEY: "" });
    expect(exit.stderr).not.toMatch(/EPIPE|Unhandled|^\s+at /m);
    expect(exit.stderr).toMatch(/^compactd demo: 2\/2 done/m);
    expect(exit.code).toBe(141);
  });

  it("names the failure in one line on stderr and exits 1 when stdout cannot take the result (a full disk)", async () => {
    const full = openSync("/dev/full", "w");
    try {
      const exit = await run([...compactArgs(path.join(dir, "session-0.json")), "--summarizer", "offline"], full, {});
      expect(exit.code).toBe(1);
      expect(exit.stderr).toMatch(/^compactd: cannot write the result to standard output: ENOSPC[^\n]*\n$/);
    } finally {
      closeSync(full);
    }
  });
});
