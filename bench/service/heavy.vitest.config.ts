/**
 * Runs the heavy-input benchmark (`npm run bench:heavy`) in one forked process;
 * the API under test runs the build (`node bin/compactd.js serve`).
 */
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["bench/service/heavyInput.ts"],
    // Shared helpers read REDIS_URL when imported; this gives them one, as for the tests.
    globalSetup: ["test/globalSetup.ts"],
    testTimeout: 900_000,
    hookTimeout: 60_000,
    fileParallelism: false,
  },
});
