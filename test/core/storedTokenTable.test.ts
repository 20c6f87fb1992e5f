/**
 * The table `npm run build` writes beside the built token counter is exactly
 * the one the vocabulary builds, and a process of the build reads it rather
 * than building it (`npm test` builds dist/ first).
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { countTextTokens, o200kTableBytes } from "../../src/core/tokenCounter.js";
import { repoRoot } from "../helpers/repoRoot.js";

const builtCounter = path.join(repoRoot, "dist/core/tokenCounter.js");
const SAMPLE = "Tool output: 3 files changed, 41 insertions(+), 7 deletions(−) — café ✓ 😀";

describe("the build's token table", () => {
  it("holds the same bytes as the table built from gpt-tokenizer's vocabulary", () => {
    const stored = readFileSync(path.join(repoRoot, "dist/core/o200k_base.table"));
    expect(Buffer.compare(stored, Buffer.from(o200kTableBytes()))).toBe(0);
  });

  it("is what a process of the build counts with, and it counts as the sources do", () => {
    const script = `
      const { countTextTokens, prepareTokenCounter } = await import(${JSON.stringify(builtCounter)});
      const prepared = prepareTokenCounter();
      process.stdout.write(JSON.stringify({ table: prepared.table, count: countTextTokens(${JSON.stringify(SAMPLE)}) }));
    `;
    const answer = JSON.parse(execFileSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" })) as { table: string; count: number };
    expect(answer).toEqual({ table: "read", count: countTextTokens(SAMPLE) });
  });
});
