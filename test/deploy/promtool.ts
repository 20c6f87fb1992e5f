/**
 * Runs Prometheus's own `promtool` (Debian's `prometheus` package; `.ci/run`
 * installs it when missing), so scrapes and alert rules are checked by the
 * tool operators run, not by a reimplementation.
 */
import { spawn } from "node:child_process";

export interface PromtoolRun {
  readonly code: number | null;
  /** stdout and stderr together: promtool reports problems on either. */
  readonly output: string;
}

export function promtool(args: readonly string[], stdin = ""): Promise<PromtoolRun> {
  return new Promise((resolve, reject) => {
    const child = spawn("promtool", args, { stdio: ["pipe", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, output }));
    child.stdin.end(stdin);
  });
}
