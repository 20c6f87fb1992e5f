/**
 * The examples as a newcomer runs them (README: compile with `tsc -p
 * tsconfig.json`, then `node dist/examples/…`), started without the
 * variables they need: each must stop with one line naming what is missing,
 * not the SDK's stack trace from its first request.
 */
import { execFile, spawnSync } from "node:child_process";
import { mkdtemp, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repoRoot } from "../helpers/repoRoot.js";

let outDir: string;

beforeAll(async () => {
  outDir = await mkdtemp(path.join(tmpdir(), "compactd-examples-"));
  const tsc = path.join(repoRoot, "node_modules/typescript/bin/tsc");
  await promisify(execFile)(process.execPath, [tsc, "-p", "tsconfig.json", "--outDir", outDir, "--declaration", "false", "--sourceMap", "false"], { cwd: repoRoot });
  // The compiled files resolve their packages from the clone's node_modules, as dist/ would.
  await symlink(path.join(repoRoot, "node_modules"), path.join(outDir, "node_modules"));
}, 120_000);

afterAll(() => rm(outDir, { recursive: true, force: true }));

describe.each([
  ["agentLoop", ["first request"], "ANTHROPIC_API_KEY"],
  ["inProcess", [], "ANTHROPIC_API_KEY"],
  ["webhookReceiver", [], "COMPACTD_WEBHOOK_SECRET"],
])("examples/%s.ts run without its variables", (example, args, variable) => {
  it(`exits 2 with one line naming ${variable}`, () => {
    const env = { ...process.env };
    delete env.ANTHROPIC_API_KEY;
    delete env.COMPACTD_WEBHOOK_SECRET;
    delete env.COMPACTD_API_KEY;
    const run = spawnSync(process.execPath, [path.join(outDir, "examples", `${example}.js`), ...args], { env, cwd: repoRoot, encoding: "utf8", timeout: 60_000 });
    expect(run.status).toBe(2);
    const lines = run.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`^${example}: not set: .*${variable}`));
    expect(run.stderr).not.toMatch(/\n\s+at /);
  });
});
