/**
 * Runs the built `compactd` command as a real child process, the way a user
 * does, so exit codes, stdout and stderr are tested as they really come out.
 * `npm test` builds `dist/` before the suite runs.
 */
import { spawn } from "node:child_process";
import path from "node:path";
import { repoRoot } from "./repoRoot.js";

export const cliPath = path.join(repoRoot, "bin/compactd.js");

export interface CliRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export function runCli(args: readonly string[], options: { env?: NodeJS.ProcessEnv; stdin?: string } = {}): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const env = { ...process.env, ...options.env };
    if (options.env && !("ANTHROPIC_API_KEY" in options.env)) delete env.ANTHROPIC_API_KEY;
    const child = spawn(process.execPath, [cliPath, ...args], { env, cwd: repoRoot });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(options.stdin ?? "");
  });
}
