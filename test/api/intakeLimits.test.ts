/**
 * What the API decides from a request's headers alone, before its body is
 * read: the key, and whether it has room for another intake. Real HTTP on a
 * port, with bodies that are announced but never finished: an answer to such
 * a request proves the body was not waited for.
 */
import { request as httpRequest, type ClientRequest, type IncomingMessage } from "node:http";
import { gzipSync } from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import { runApi, type RunningApi } from "../../src/api/runApi.js";
import { markedRequest } from "../helpers/markedConversation.js";
import { deleteKeysUnder } from "../helpers/redisTestPrefix.js";
import { bearer, serviceConfig } from "../helpers/serviceConfig.js";

const MIB = 1024 * 1024;

let api: RunningApi | undefined;
let prefix = "";
const open: ClientRequest[] = [];
afterEach(async () => {
  for (const request of open.splice(0)) request.destroy();
  if (api !== undefined) {
    await api.close();
    await deleteKeysUnder(prefix);
  }
  api = undefined;
});

async function startApi(env: Record<string, string> = {}): Promise<RunningApi> {
  const config = serviceConfig("intake", env);
  prefix = config.queuePrefix;
  api = await runApi(config, { logger: false }, "127.0.0.1");
  return api;
}

/** Starts a POST announcing `announced` bytes and sends only `sent` of them (or `first`); resolves with the response if one comes. */
function partialPost(port: number, headers: Record<string, string>, announced: number, sent = 1024, first?: Buffer): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const request = httpRequest({
      host: "127.0.0.1",
      port,
      method: "POST",
      path: "/v1/compactions",
      headers: { ...headers, "content-type": "application/json", "content-length": String(announced) },
    });
    open.push(request);
    request.on("response", resolve);
    request.on("error", reject);
    request.write(first ?? `{"messages":"${"x".repeat(Math.max(0, sent - 14))}`);
  });
}

function bodyOf(response: IncomingMessage): Promise<Record<string, unknown>> {
  return new Promise((resolve) => {
    let text = "";
    response.on("data", (chunk: Buffer) => (text += chunk.toString()));
    response.on("end", () => resolve(JSON.parse(text) as Record<string, unknown>));
  });
}

/** Whether a promise is still pending after other work has had a moment to run. */
async function pending(promise: Promise<unknown>): Promise<boolean> {
  const marker = Symbol("pending");
  return (await Promise.race([promise, new Promise((resolve) => setTimeout(() => resolve(marker), 300))])) === marker;
}

describe("the API before it reads a body", () => {
  it("refuses a wrong key with 401 while the body is still arriving", async () => {
    const { port } = await startApi();
    const response = await partialPost(port, { authorization: "Bearer wrong" }, 20 * MIB);
    expect(response.statusCode).toBe(401);
    expect(((await bodyOf(response)).error as { code: string }).code).toBe("unauthorized");
  });

  it("answers 503 with Retry-After beyond its concurrent intakes, and takes requests again once they are done", async () => {
    const { port } = await startApi({ COMPACTD_MAX_INTAKES: "2" });
    const first = partialPost(port, bearer("acme"), MIB);
    const second = partialPost(port, bearer("acme"), MIB);
    expect(await pending(first)).toBe(true);
    expect(await pending(second)).toBe(true);

    const refused = await partialPost(port, bearer("acme"), MIB);
    expect(refused.statusCode).toBe(503);
    expect(refused.headers["retry-after"]).toBeDefined();
    expect(((await bodyOf(refused)).error as { code: string }).code).toBe("busy");

    for (const request of open.splice(0)) request.destroy();
    const accepted = await fetch(`http://127.0.0.1:${port}/v1/compactions`, {
      method: "POST",
      headers: { ...bearer("acme"), "content-type": "application/json" },
      body: JSON.stringify(markedRequest("after")),
    });
    expect(accepted.status).toBe(202);
  });

  it("answers 503 beyond its bytes in flight, but always admits one request", async () => {
    const { port } = await startApi({ COMPACTD_MAX_INTAKE_BYTES: String(MIB) });
    const big = partialPost(port, bearer("acme"), 2 * MIB);
    expect(await pending(big)).toBe(true);
    const refused = await partialPost(port, bearer("acme"), 1024, 100);
    expect(refused.statusCode).toBe(503);
    expect(refused.headers["retry-after"]).toBeDefined();
  });

  it("admits a compressed body on what it announces, and lets others in beside it", async () => {
    const { port } = await startApi({ COMPACTD_MAX_INTAKE_BYTES: String(MIB), COMPACTD_BODY_LIMIT_BYTES: String(2 * MIB) });
    const gzipped = gzipSync(JSON.stringify(markedRequest("compressed")));
    const compressed = partialPost(port, { ...bearer("acme"), "content-encoding": "gzip" }, gzipped.length, 0, gzipped.subarray(0, 100));
    expect(await pending(compressed)).toBe(true);
    expect(await pending(partialPost(port, bearer("acme"), 1024, 100))).toBe(true);
  });

  it("answers 503 when a compressed body decompresses past the bytes in flight while others hold them", async () => {
    const { port } = await startApi({ COMPACTD_MAX_INTAKE_BYTES: String(MIB), COMPACTD_BODY_LIMIT_BYTES: String(4 * MIB) });
    const holder = partialPost(port, bearer("acme"), MIB / 2);
    expect(await pending(holder)).toBe(true);
    // About 1.2 MB of JSON in a few kilobytes: admitted on those, refused as it grows past the 1 MiB in flight.
    const json = JSON.stringify(markedRequest("grows", { messages: [{ role: "user", content: "x".repeat(1_200_000) }] }));
    const gzipped = gzipSync(json);
    const refused = await partialPost(port, { ...bearer("acme"), "content-encoding": "gzip" }, gzipped.length, 0, gzipped);
    expect(refused.statusCode).toBe(503);
    expect(refused.headers["retry-after"]).toBeDefined();
    expect(await bodyOf(refused)).toMatchObject({ error: { code: "busy" } });
  });
});
