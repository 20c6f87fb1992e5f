import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/globalSetup.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Service tests start real processes and share one Redis; two cores is all CI has.
    maxWorkers: 2,
  },
});
