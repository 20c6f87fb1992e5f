/** Runs the fidelity gap listing (`npm run bench:fidelity:gaps`) in one process. */
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["bench/fidelityGaps.ts"],
    testTimeout: 600_000,
    fileParallelism: false,
  },
});
