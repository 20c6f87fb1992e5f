/**
 * Runs the core benchmark (`npm run bench:core`) in one forked process with a
 * callable GC, so that each timed call starts from a collected heap.
 */
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["bench/core.ts"],
    execArgv: ["--expose-gc"],
    testTimeout: 600_000,
    fileParallelism: false,
  },
});
