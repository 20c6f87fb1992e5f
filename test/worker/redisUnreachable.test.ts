import { describe, expect, it } from "vitest";
import { runWorker } from "../../src/worker/runWorker.js";
import { serviceConfig } from "../helpers/serviceConfig.js";

describe("a worker whose Redis cannot be reached", () => {
  it("starts, reports not ready on /readyz, and still shuts down within its deadline", async () => {
    const errors: Error[] = [];
    const worker = await runWorker(
      { ...serviceConfig("worker-no-redis"), redisUrl: "redis://127.0.0.1:1", shutdownTimeoutMs: 1_000 },
      { onError: (error) => errors.push(error) },
    );
    const ready = await fetch(`http://127.0.0.1:${worker.metricsPort}/readyz`);
    expect(ready.status).toBe(503);
    await worker.close();
    expect(worker.consuming()).toBe(false);
    expect(errors.some((error) => /ECONNREFUSED/.test(error.message))).toBe(true);
  });
});
