/**
 * Runs the agent-side client's benchmark (`npm run bench:client`) alone, in
 * one forked process; the TypeScript sources load in place.
 */
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["bench/agentClient.ts"],
    testTimeout: 600_000,
    fileParallelism: false,
  },
});
