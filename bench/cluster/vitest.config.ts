/**
 * Runs the cluster benchmark (`npm run bench:cluster`) in one forked process:
 * it starts its own Redis Clusters on free ports and stops them.
 */
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["bench/cluster/index.ts"],
    // Shared helpers read REDIS_URL when imported; this gives them one, as for the tests.
    globalSetup: ["test/globalSetup.ts"],
    testTimeout: 900_000,
    hookTimeout: 120_000,
    fileParallelism: false,
  },
});
