/**
 * A fresh API process builds the token counter's table while it starts, not
 * on the first request that needs a count: loading the vocabulary takes most
 * of a second, which that request (the first after every restart or
 * scale-out) would otherwise wait for. The log says so before the server
 * listens. In a file of its own, so that nothing in this process has counted
 * before the API starts.
 */
import { afterAll, describe, expect, it } from "vitest";
import { runApi } from "../../src/api/runApi.js";
import { loggerOptions } from "../../src/telemetry/logger.js";
import { logLines } from "../helpers/logLines.js";
import { deleteKeysUnder } from "../helpers/redisTestPrefix.js";
import { serviceConfig } from "../helpers/serviceConfig.js";

const config = serviceConfig("token-counter-at-start");
const { stream, lines } = logLines();

afterAll(async () => {
  await deleteKeysUnder(config.queuePrefix);
});

describe("a starting API", () => {
  it("has its token counter ready, and logs how long that took, before it listens", async () => {
    const api = await runApi(config, { logger: { ...loggerOptions("api", "info"), stream } }, "127.0.0.1");
    await api.close();
    const ready = lines.findIndex((line) => line.msg === "token counter ready");
    const listening = lines.findIndex((line) => String(line.msg).startsWith("Server listening"));
    expect(ready).toBeGreaterThanOrEqual(0);
    expect(listening).toBeGreaterThan(ready);
    expect(lines[ready]).toMatchObject({ level: "info", component: "api" });
    // Run from the sources, as here, it is built; a process of the build reads it (storedTokenTable.test.ts).
    expect(lines[ready]).toMatchObject({ ms: expect.any(Number), table: "built" });
  });
});
