/**
 * What a process keeps of the tokenizer once it has counted: the rank
 * table's typed arrays, not gpt-tokenizer's vocabulary (200,000 strings and
 * the module's source, about 12 MB of heap that every full collection would
 * mark again).
 *
 * - A process of the build (the API, a worker, the CLI) reads the table the
 *   build wrote and never loads the vocabulary: measured in a child process
 *   running the built counter, on the Node that runs the suite.
 * - Run from the sources, the counter builds the table from the vocabulary
 *   and drops the module from require's cache. What the heap keeps after that
 *   is V8's business: Node 20 frees it all, while Node 22 keeps the compiled
 *   module in V8's compilation cache (about 10 MB; none with
 *   `--no-compilation-cache`). Only processes run from the sources (the
 *   tests, the benchmarks) ever load it.
 *
 * In a test file of its own, so nothing else has loaded the counter here.
 */
import { execFileSync } from "node:child_process";
import { createRequire } from "node:module";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { repoRoot } from "../helpers/repoRoot.js";

const MB = 1024 * 1024;

describe("the token counter, once it has its table", () => {
  it("keeps the table alone in a process of the build", () => {
    const builtCounter = path.join(repoRoot, "dist/core/tokenCounter.js");
    const script = `
      const live = () => { gc(); gc(); const { heapUsed, arrayBuffers } = process.memoryUsage(); return heapUsed + arrayBuffers; };
      const before = live();
      const { countTextTokens, prepareTokenCounter } = await import(${JSON.stringify(builtCounter)});
      const { table } = prepareTokenCounter();
      const count = countTextTokens("The vocabulary stays on disk → the table is read.");
      process.stdout.write(JSON.stringify({ table, count, kept: live() - before }));
    `;
    const answer = JSON.parse(execFileSync(process.execPath, ["--expose-gc", "--input-type=module", "-e", script], { encoding: "utf8" })) as {
      table: string;
      count: number;
      kept: number;
    };
    expect(answer.table).toBe("read");
    expect(answer.count).toBeGreaterThan(5);
    // Measured: 5.4 MB (the table's arrays and the counter's code); 17.7 MB
    // when the vocabulary module was imported and stayed loaded.
    expect(answer.kept).toBeLessThan(10 * MB);
  });

  it("lets go of the vocabulary module once it has built the table from it, run from the sources", async () => {
    const { countTextTokens, prepareTokenCounter } = await import("../../src/core/tokenCounter.js");
    expect(prepareTokenCounter().table).toBe("built");
    expect(countTextTokens("The vocabulary is read once → then let go.")).toBeGreaterThan(5);
    const require = createRequire(path.join(repoRoot, "src/core/tokenCounter.ts"));
    expect(require.cache[require.resolve("gpt-tokenizer/bpeRanks/o200k_base")]).toBeUndefined();
  });
});
