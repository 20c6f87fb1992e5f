/**
 * A fresh worker builds the token counter's table before it takes a job, so
 * its first job does not wait most of a second for the vocabulary. In a file
 * of its own, so that nothing in this process has counted before the worker
 * starts.
 */
import { afterAll, describe, expect, it } from "vitest";
import { createLogger } from "../../src/telemetry/logger.js";
import { runWorker } from "../../src/worker/runWorker.js";
import { logLines } from "../helpers/logLines.js";
import { deleteKeysUnder } from "../helpers/redisTestPrefix.js";
import { serviceConfig } from "../helpers/serviceConfig.js";

const config = serviceConfig("worker-token-counter-at-start");
const { stream, lines } = logLines();

afterAll(async () => {
  await deleteKeysUnder(config.queuePrefix);
});

describe("a starting worker", () => {
  it("has its token counter ready, and logs how long that took, once it has started", async () => {
    const worker = await runWorker(config, { logger: createLogger("worker", "info", stream), serveMetrics: false, onError: () => {} });
    await worker.close();
    const ready = lines.find((line) => line.msg === "token counter ready");
    expect(ready).toMatchObject({ level: "info", component: "worker" });
    // Run from the sources, as here, it is built; a process of the build reads it (storedTokenTable.test.ts).
    expect(ready).toMatchObject({ ms: expect.any(Number), table: "built" });
  });
});
