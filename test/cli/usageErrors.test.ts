import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/runCli.js";

describe("a compactd command line that cannot be parsed", () => {
  it("is refused as compactd's own errors are: one line saying compactd, exit 2, and where the help is", async () => {
    const refusals: [args: string[], line: string][] = [
      [["--bogus"], "compactd: unknown option '--bogus' (see compactd --help)"],
      [["frobnicate"], "compactd: unknown command 'frobnicate' (see compactd --help)"],
      [["compact", "--context-window", "100000"], "compactd: missing required argument 'file' (see compactd compact --help)"],
      [["compact", "x.json", "--context-window", "100000", "--bogus"], "compactd: unknown option '--bogus' (see compactd compact --help)"],
      [["dev", "--host"], "compactd: option '--host <address>' argument missing (see compactd dev --help)"],
    ];
    for (const [args, line] of refusals) {
      const run = await runCli(args);
      expect({ args, code: run.code, stderr: run.stderr }).toEqual({ args, code: 2, stderr: `${line}\n` });
      expect(run.stdout).toBe("");
    }
  });

  it("keeps the value a flag refused, and why, on the same one line", async () => {
    const run = await runCli(["compact", "x.json", "--context-window", "abc"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(
      `compactd: option '--context-window <tokens>' argument 'abc' is invalid. --context-window takes a positive whole number, got "abc" (see compactd compact --help)\n`,
    );
  });
});
