/**
 * Runs the cluster benchmark (`npm run bench:cluster`) in one forked process:
 * it starts its own Redis Clusters on free ports and stops them.
 */
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["bench/cluster/index.ts"],
    testTimeout: 900_000,
    hookTimeout: 120_000,
    fileParallelism: false,
  },
});
