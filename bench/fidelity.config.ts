/** Runs the summary-fidelity benchmark (`npm run bench:fidelity`) in one process. */
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["bench/fidelity.ts"],
    testTimeout: 600_000,
    fileParallelism: false,
  },
});
