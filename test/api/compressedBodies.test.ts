/**
 * Request bodies sent with a Content-Encoding, over real HTTP to a listening
 * API: gzip, deflate and br are decompressed before the JSON is read, the
 * body limit counts what they decompress to, and an encoding the API does
 * not take, or bytes that are not what the header says, get a 4xx naming the
 * header instead of "not valid JSON".
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { brotliCompressSync, deflateSync, gzipSync } from "node:zlib";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp } from "../../src/api/buildApp.js";
import type { Config } from "../../src/config.js";
import { conversation, reactTurn } from "../helpers/conversations.js";
import { deleteKeysUnder } from "../helpers/redisTestPrefix.js";
import { repoRoot } from "../helpers/repoRoot.js";
import { bearer, serviceConfig } from "../helpers/serviceConfig.js";

const BODY_LIMIT = 400_000;
let app: FastifyInstance;
let config: Config;
let base: string;
let request: Record<string, unknown>;

beforeAll(async () => {
  config = serviceConfig("compressed", { COMPACTD_BODY_LIMIT_BYTES: String(BODY_LIMIT) });
  app = await buildApp(config);
  base = await app.listen({ port: 0, host: "127.0.0.1" });
  const example = JSON.parse(await readFile(path.join(repoRoot, "examples/compaction-request.json"), "utf8")) as Record<string, unknown>;
  // No callback: this API has no receiver to call.
  const { callbackUrl: _dropped, ...rest } = example;
  request = rest;
});

afterAll(async () => {
  await app.close();
  await deleteKeysUnder(config.queuePrefix);
});

function post(body: Uint8Array | string, headers: Record<string, string>): Promise<Response> {
  return fetch(`${base}/v1/compactions`, {
    method: "POST",
    headers: { ...bearer("acme"), "content-type": "application/json", ...headers },
    body,
  });
}

const ENCODERS: Record<string, (bytes: Buffer) => Buffer> = { gzip: gzipSync, deflate: deflateSync, br: brotliCompressSync };

describe("POST /v1/compactions with a compressed body", () => {
  it.each(Object.keys(ENCODERS))("takes %s, as the same request sent uncompressed", async (encoding) => {
    const json = Buffer.from(JSON.stringify({ ...request, conversationId: `compressed-${encoding}` }));
    const key = `compressed-${encoding}-${Date.now()}`;
    const compressed = await post(ENCODERS[encoding]!(json), { "content-encoding": encoding, "idempotency-key": key });
    expect(compressed.status, await compressed.clone().text()).toBe(202);
    const { id } = (await compressed.json()) as { id: string };
    // The key is bound to the request's content: the same request sent plainly is a replay of the same job, not a 422.
    const plain = await post(json, { "idempotency-key": key });
    expect([200, 202]).toContain(plain.status);
    expect(((await plain.json()) as { id: string }).id).toBe(id);
  });

  it("takes a large compressed body, which is read on an intake thread", async () => {
    const messages = conversation(...Array.from({ length: 12 }, () => reactTurn({ rounds: 4, toolResultChars: 5_000 })));
    const json = Buffer.from(JSON.stringify({ messages, contextWindow: 32_000, conversationId: "compressed-large" }));
    expect(json.length).toBeGreaterThan(config.intakeThreadMinBytes);
    expect(json.length).toBeLessThan(BODY_LIMIT);
    const response = await post(gzipSync(json), { "content-encoding": "gzip" });
    expect(response.status, await response.clone().text()).toBe(202);
  });

  it("takes a compressed batch", async () => {
    const batch = { items: [{ ...request, conversationId: "compressed-batch-1" }, { ...request, conversationId: "compressed-batch-2" }] };
    const response = await fetch(`${base}/v1/compactions/batch`, {
      method: "POST",
      headers: { ...bearer("acme"), "content-type": "application/json", "content-encoding": "br" },
      body: brotliCompressSync(Buffer.from(JSON.stringify(batch))),
    });
    expect(response.status, await response.clone().text()).toBe(202);
    expect(((await response.json()) as { items: unknown[] }).items).toHaveLength(2);
  });

  it("counts the body limit on what the body decompresses to", async () => {
    const bomb = Buffer.from(JSON.stringify({ ...request, messages: [{ role: "user", content: "x".repeat(5 * BODY_LIMIT) }] }));
    const compressed = gzipSync(bomb);
    expect(compressed.length).toBeLessThan(BODY_LIMIT / 10);
    const response = await post(compressed, { "content-encoding": "gzip" });
    expect(response.status).toBe(413);
    const { error } = (await response.json()) as { error: { code: string; message: string } };
    expect(error.code).toBe("body_too_large");
    expect(error.message).toMatch(/decompress/);
  });

  // Names an object literal answers to by inheritance stand for no coding either.
  it.each(["compress", "gzip, br", "constructor", "toString", "__proto__"])(
    "refuses an encoding it does not take (%s) with 415, naming the header and what it takes",
    async (coding) => {
      const response = await post(Buffer.from(JSON.stringify(request)), { "content-encoding": coding });
      expect(response.status).toBe(415);
      expect(response.headers.get("accept-encoding")).toBe("gzip, deflate, br");
      const { error } = (await response.json()) as { error: { code: string; message: string } };
      expect(error.code).toBe("unsupported_media_type");
      expect(error.message).toMatch(/content-encoding/i);
    },
  );

  it("names an encoding of thousands of characters without repeating it all", async () => {
    const response = await post(Buffer.from(JSON.stringify(request)), { "content-encoding": "z".repeat(10_000) });
    expect(response.status).toBe(415);
    const text = await response.text();
    expect(text).toContain(`content-encoding: ${"z".repeat(40)}…`);
    expect(text).not.toContain("z".repeat(41));
  });

  it("refuses a body that is not what its content-encoding says with 400 naming the header", async () => {
    const response = await post(JSON.stringify(request), { "content-encoding": "gzip" });
    expect(response.status).toBe(400);
    const { error } = (await response.json()) as { error: { code: string; message: string } };
    expect(error.code).toBe("invalid_content_encoding");
    expect(error.message).toMatch(/content-encoding: gzip/);
  });

  it("takes identity as no encoding, and answers a GET or DELETE carrying the header as usual", async () => {
    const response = await post(JSON.stringify({ ...request, conversationId: "identity" }), { "content-encoding": "identity" });
    expect(response.status).toBe(202);
    const { id } = (await response.json()) as { id: string };
    const headers = { ...bearer("acme"), "content-encoding": "gzip" };
    expect((await fetch(`${base}/v1/compactions/${id}`, { headers })).status).toBe(200);
    expect([200, 202]).toContain((await fetch(`${base}/v1/compactions/${id}`, { method: "DELETE", headers })).status);
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
  });
});
