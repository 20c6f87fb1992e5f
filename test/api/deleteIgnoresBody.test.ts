/**
 * `DELETE /v1/compactions/:id` takes no body, and many HTTP clients send one
 * anyway: `Content-Type: application/json` with nothing after it, or the
 * JSON they send with every request. Whatever comes with a DELETE is
 * ignored, over a real connection that stays usable afterwards.
 */
import { Agent } from "node:http";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runApi, type RunningApi } from "../../src/api/runApi.js";
import { markedRequest } from "../helpers/markedConversation.js";
import { rawRequest } from "../helpers/rawHttp.js";
import { deleteKeysUnder } from "../helpers/redisTestPrefix.js";
import { bearer, serviceConfig } from "../helpers/serviceConfig.js";

const config = serviceConfig("delete-body");
let api: RunningApi;
let jobPath: string;

beforeAll(async () => {
  api = await runApi(config, { logger: false }, "127.0.0.1");
  const submitted = await rawRequest(api.port, {
    method: "POST",
    path: "/v1/compactions",
    headers: { ...bearer("acme"), "content-type": "application/json" },
    body: JSON.stringify(markedRequest("delete-body")),
  });
  expect(submitted.status, submitted.body).toBe(202);
  jobPath = submitted.headers.location!;
});

afterAll(async () => {
  await api.close();
  await deleteKeysUnder(config.queuePrefix);
});

describe("DELETE /v1/compactions/:id ignores what comes with it", () => {
  it.each([
    ["Content-Type: application/json and an empty body", { "content-type": "application/json" }, ""],
    ["a JSON body", { "content-type": "application/json" }, '{"reason":"user asked"}'],
    ["malformed JSON", { "content-type": "application/json" }, "{"],
    ["a text body", { "content-type": "text/plain" }, "cancel it please"],
    ["a body without a Content-Type", {}, "cancel"],
    ["a Content-Encoding the body is not in", { "content-type": "application/json", "content-encoding": "gzip" }, "not gzip"],
    ["a Content-Encoding the API does not take", { "content-type": "application/json", "content-encoding": "zstd" }, "{}"],
    ["a gzip body", { "content-type": "application/json", "content-encoding": "gzip" }, gzipSync("{}")],
  ])("cancels with %s", async (_what, headers: Record<string, string>, body: string | Buffer) => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const cancelled = await rawRequest(api.port, { method: "DELETE", path: jobPath, headers: { ...bearer("acme"), ...headers }, body, agent });
      expect(cancelled.status, cancelled.body).toBe(200);
      expect(JSON.parse(cancelled.body)).toMatchObject({ status: "cancelled" });
      // The body was read past, not taken for the next request on the connection.
      const next = await rawRequest(api.port, { method: "GET", path: jobPath, headers: bearer("acme"), agent });
      expect(next.status, next.body).toBe(200);
    } finally {
      agent.destroy();
    }
  });
});
