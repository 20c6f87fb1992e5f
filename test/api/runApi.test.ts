import { afterAll, describe, expect, it } from "vitest";
import { runApi } from "../../src/api/runApi.js";
import { deleteKeysUnder } from "../helpers/redisTestPrefix.js";
import { bearer, serviceConfig } from "../helpers/serviceConfig.js";

const config = serviceConfig("run-api");

afterAll(async () => {
  await deleteKeysUnder(config.queuePrefix);
});

describe("runApi", () => {
  it("serves the API over HTTP and stops listening once closed", async () => {
    const api = await runApi(config, { logger: false }, "127.0.0.1");
    const base = `http://127.0.0.1:${api.port}`;
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    const submitted = await fetch(`${base}/v1/compactions`, {
      method: "POST",
      headers: { ...bearer("acme"), "content-type": "application/json" },
      body: JSON.stringify({ messages: [{ role: "user", content: "hi" }], contextWindow: 100_000 }),
    });
    expect(await submitted.json()).toEqual({ status: "nothing_to_compact", stillAboveThreshold: false });

    await api.close();
    await expect(fetch(`${base}/healthz`)).rejects.toThrow();
  });
});
