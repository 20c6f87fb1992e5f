import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { repoRoot } from "../helpers/repoRoot.js";
import { runCli } from "../helpers/runCli.js";

describe("compactd --version", () => {
  it("prints the package's version and exits 0", async () => {
    const { version } = JSON.parse(readFileSync(path.join(repoRoot, "package.json"), "utf8")) as { version: string };
    for (const flag of ["--version", "-V"]) {
      const run = await runCli([flag]);
      expect(run.code).toBe(0);
      expect(run.stdout).toBe(`${version}\n`);
    }
  });
});
