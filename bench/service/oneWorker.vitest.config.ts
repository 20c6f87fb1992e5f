/**
 * Runs the one-worker concurrency scenario alone (`npm run bench:concurrency`);
 * the worker under test runs the build (`node bin/compactd.js worker`).
 */
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["bench/service/oneWorker.ts"],
    // Shared helpers read REDIS_URL when imported; this gives them one, as for the tests.
    globalSetup: ["test/globalSetup.ts"],
    testTimeout: 300_000,
    hookTimeout: 60_000,
  },
});
