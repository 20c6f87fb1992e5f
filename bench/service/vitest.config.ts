/**
 * Runs the service benchmark (`npm run bench:service`) in one forked process.
 * vitest only resolves the TypeScript sources and test helpers in place; the
 * service processes themselves run the build (`node bin/compactd.js`).
 */
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["bench/service/index.ts"],
    globalSetup: ["test/globalSetup.ts"],
    testTimeout: 600_000,
    hookTimeout: 60_000,
    fileParallelism: false,
  },
});
