/**
 * Runs one scenario of the service benchmark alone: `npm run
 * bench:concurrency` (oneWorker.ts), `npm run bench:overhead`
 * (overheadAlone.ts) or `npm run bench:side-by-side` (sideBySide.ts), each
 * naming its file as vitest's filter; the service processes under test run
 * the build (`node bin/compactd.js serve|worker`).
 */
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["bench/service/oneWorker.ts", "bench/service/overheadAlone.ts", "bench/service/sideBySide.ts"],
    // Shared helpers read REDIS_URL when imported; this gives them one, as for the tests.
    globalSetup: ["test/globalSetup.ts"],
    testTimeout: 300_000,
    hookTimeout: 60_000,
  },
});
