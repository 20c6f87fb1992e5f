/**
 * Runs the built `compactd` on a pseudo-terminal (`script`), as a person at a
 * shell would, with stdout discarded: what it returns is what stderr drew on
 * the screen (and the terminal's echo of anything typed).
 *
 * `typed` is typed at the terminal, as a person would type it; a line holding
 * only Ctrl-D (`\x04`) ends the input there, as it does at a shell.
 */
import { spawn } from "node:child_process";
import { repoRoot } from "./repoRoot.js";
import { cliPath } from "./runCli.js";

export function stderrOnTerminal(args: readonly string[], env: NodeJS.ProcessEnv = {}, typed?: string): Promise<string> {
  const command = [process.execPath, cliPath, ...args].map((a) => `'${a}'`).join(" ");
  return new Promise<string>((resolve, reject) => {
    const child = spawn("script", ["-qec", `${command} >/dev/null`, "/dev/null"], { cwd: repoRoot, env: { ...process.env, ...env } });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.on("error", reject);
    child.on("close", () => resolve(out));
    if (typed !== undefined) child.stdin.write(typed);
  });
}
