/**
 * Requests refused before any route sees them (by fastify's parser and
 * router, or by Node's HTTP parser before fastify) are answered in the API's
 * error shape, counted in `compactd_http_requests_total` with their status
 * as a real scrape shows, and never echo back the oversized URL or header
 * they were refused for. Over real connections: Node's own limits are what
 * is tested.
 */
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Queue } from "bullmq";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp } from "../../src/api/buildApp.js";
import { COMPACTION_QUEUE } from "../../src/queue/queueNames.js";
import { apiForFile } from "../helpers/apiForFile.js";
import { rawExchange, rawRequest } from "../helpers/rawHttp.js";
import { deleteKeysUnder } from "../helpers/redisTestPrefix.js";
import { bearer, serviceConfig, TEST_TENANTS } from "../helpers/serviceConfig.js";

const api = apiForFile("framework-refusals", { COMPACTD_BODY_LIMIT_BYTES: "100000" });

/** The count of answers with these labels, as GET /metrics exports it (0 for a series not there yet). */
async function counted(method: string, route: string, status: number, port = api.port): Promise<number> {
  const scrape = await rawRequest(port, { method: "GET", path: "/metrics" });
  const series = `compactd_http_requests_total{method="${method}",route="${route}",status_code="${status}"} `;
  const line = scrape.body.split("\n").find((candidate) => candidate.startsWith(series));
  return line === undefined ? 0 : Number(line.slice(series.length));
}

/** How many answers with these labels the duration histogram timed (0 for a series not there yet). */
async function timed(method: string, route: string): Promise<number> {
  const scrape = await rawRequest(api.port, { method: "GET", path: "/metrics" });
  const series = `compactd_http_request_duration_seconds_count{method="${method}",route="${route}"} `;
  const line = scrape.body.split("\n").find((candidate) => candidate.startsWith(series));
  return line === undefined ? 0 : Number(line.slice(series.length));
}

/** Runs `request`, and expects it answered with `status` in the API's error shape and counted once under the labels. */
async function expectRefusedAndCounted(
  labels: { method: string; route: string },
  status: number,
  code: string,
  request: () => Promise<{ status: number; body: string }>,
  port = api.port,
): Promise<string> {
  const before = await counted(labels.method, labels.route, status, port);
  const response = await request();
  expect(response.status, response.body).toBe(status);
  const { error } = JSON.parse(response.body) as { error: { code: string; message: string } };
  expect(error.code).toBe(code);
  expect(error.message.length).toBeGreaterThan(0);
  expect(await counted(labels.method, labels.route, status, port)).toBe(before + 1);
  return response.body;
}

/** A raw HTTP response's status and body. */
function parsed(raw: string): { status: number; body: string } {
  const [head = "", body = ""] = raw.split("\r\n\r\n", 2);
  return { status: Number(head.split(" ")[1]), body };
}

const json = { ...bearer("acme"), "content-type": "application/json" };

describe("requests refused before a route sees them", () => {
  it("malformed JSON: 400", async () => {
    await expectRefusedAndCounted({ method: "POST", route: "/v1/compactions" }, 400, "invalid_json", () =>
      rawRequest(api.port, { method: "POST", path: "/v1/compactions", headers: json, body: '{"messages": [' }),
    );
  });

  it("a body over the limit: 413", async () => {
    await expectRefusedAndCounted({ method: "POST", route: "/v1/compactions" }, 413, "body_too_large", () =>
      rawRequest(api.port, { method: "POST", path: "/v1/compactions", headers: json, body: JSON.stringify({ pad: "x".repeat(200_000) }) }),
    );
  });

  it("an unknown route: 404", async () => {
    await expectRefusedAndCounted({ method: "GET", route: "unmatched" }, 404, "not_found", () => rawRequest(api.port, { method: "GET", path: "/nowhere" }));
  });

  it("a path segment longer than the router takes: 414, without the URL", async () => {
    const body = await expectRefusedAndCounted({ method: "GET", route: "unmatched" }, 414, "uri_too_long", () =>
      rawRequest(api.port, { method: "GET", path: `/v1/compactions/${"s".repeat(500)}`, headers: bearer("acme") }),
    );
    expect(body).not.toContain("s".repeat(100));
  });

  it("a %-escape in the path that does not decode: 400, without the URL", async () => {
    const body = await expectRefusedAndCounted({ method: "DELETE", route: "unmatched" }, 400, "invalid_url", () =>
      rawRequest(api.port, { method: "DELETE", path: `/v1/compactions/%zz${"z".repeat(1_000)}`, headers: bearer("acme") }),
    );
    expect(body).not.toContain("z".repeat(100));
  });

  it.each([
    ["with a host the URL parser cannot read", "http://[/", "host or port is missing or malformed"],
    ["with a port out of range", "http://example.com:99999/v1/compactions", "host or port is missing or malformed"],
    ["with no host", "http:///v1/compactions", "host or port is missing or malformed"],
    ["with a fragment", "http://example.com/v1/compactions#x", "fragment"],
    ["of another scheme", "ftp://example.com/v1/compactions", "neither a path"],
  ])("an absolute-form URL %s: 400 saying what is wrong with it, not naming an escape", async (_what, target, reason) => {
    const body = await expectRefusedAndCounted({ method: "GET", route: "unmatched" }, 400, "invalid_url", async () =>
      parsed(await rawExchange(api.port, `GET ${target} HTTP/1.1\r\nHost: example.com\r\nConnection: close\r\n\r\n`)),
    );
    const { error } = JSON.parse(body) as { error: { message: string } };
    expect(error.message).not.toContain("%-escape");
    expect(error.message).toContain(reason);
  });

  it.each([
    ["malformed JSON", "application/json", "{"],
    ["a text body", "text/plain", "hello"],
    ["a body over the limit", "application/json", JSON.stringify({ pad: "x".repeat(200_000) })],
  ])("an unknown route with %s: 404, the body unread", async (_what, contentType, body) => {
    await expectRefusedAndCounted({ method: "POST", route: "unmatched" }, 404, "not_found", () =>
      rawRequest(api.port, { method: "POST", path: "/v1/nowhere", headers: { ...bearer("acme"), "content-type": contentType }, body }),
    );
  });

  it("a URL longer than the API takes: 414, without the URL", async () => {
    const path = `/v1/compactions/${"u".repeat(5_000)}`;
    const body = await expectRefusedAndCounted({ method: "GET", route: "unmatched" }, 414, "uri_too_long", () =>
      rawRequest(api.port, { method: "GET", path, headers: bearer("acme") }),
    );
    expect(body).not.toContain("u".repeat(100));
  });

  it("a URL longer than Node's HTTP parser takes: 431, without the URL", async () => {
    const body = await expectRefusedAndCounted({ method: "unknown", route: "unparsed" }, 431, "headers_too_large", () =>
      rawRequest(api.port, { method: "GET", path: `/healthz?${"q".repeat(20_000)}` }),
    );
    expect(body).not.toContain("q".repeat(100));
  });

  it("headers larger than Node's HTTP parser takes: 431, without the header", async () => {
    const body = await expectRefusedAndCounted({ method: "unknown", route: "unparsed" }, 431, "headers_too_large", () =>
      rawRequest(api.port, { method: "GET", path: "/healthz", headers: { "x-huge": "h".repeat(20_000) } }),
    );
    expect(body).not.toContain("h".repeat(100));
  });

  it("counts refusals made before fastify routes a request without timing them, as OPERATIONS.md says", async () => {
    const before = { unparsed: await timed("unknown", "unparsed"), unrouted: await timed("DELETE", "unmatched"), notFound: await timed("GET", "unmatched") };
    await expectRefusedAndCounted({ method: "unknown", route: "unparsed" }, 400, "bad_request", async () =>
      parsed(await rawExchange(api.port, "STILL NOT HTTP\r\n\r\n")),
    );
    await expectRefusedAndCounted({ method: "DELETE", route: "unmatched" }, 400, "invalid_url", () =>
      rawRequest(api.port, { method: "DELETE", path: "/v1/compactions/%zz", headers: bearer("acme") }),
    );
    await expectRefusedAndCounted({ method: "GET", route: "unmatched" }, 404, "not_found", () => rawRequest(api.port, { method: "GET", path: "/elsewhere" }));
    expect(await timed("unknown", "unparsed")).toBe(before.unparsed);
    expect(await timed("DELETE", "unmatched")).toBe(before.unrouted);
    // An unknown route is answered inside fastify's request lifecycle, so it is timed.
    expect(await timed("GET", "unmatched")).toBe(before.notFound + 1);
  });

  it("a request line that is not HTTP: 400", async () => {
    await expectRefusedAndCounted({ method: "unknown", route: "unparsed" }, 400, "bad_request", async () =>
      parsed(await rawExchange(api.port, "NOT HTTP AT ALL\r\n\r\n")),
    );
  });
});

/**
 * Node gives a request's line and headers `headersTimeout` (60 s) to arrive,
 * and refuses one still unfinished then through the same clientError handler
 * as the refusals above. (fastify turns Node's whole-request timeout off, so
 * a body that arrives slowly is not refused this way.) The API here is
 * fastify's own app with that timeout, and the interval at which Node checks
 * it, shortened so the test takes a second rather than a minute; everything
 * else is Node's own path.
 */
describe("a request whose headers do not arrive in time", () => {
  const config = serviceConfig("request-timeout");
  let app: FastifyInstance | undefined;
  beforeAll(async () => {
    app = await buildApp(config);
    app.server.headersTimeout = 300;
    // Read when the server starts listening (30 s by default); an option of createServer that fastify does not pass on.
    (app.server as Server & { connectionsCheckingInterval: number }).connectionsCheckingInterval = 50;
    await app.listen({ port: 0, host: "127.0.0.1" });
  });
  afterAll(async () => {
    await app?.close();
    await deleteKeysUnder(config.queuePrefix);
  });

  it("408 in the API's error shape, counted as unparsed, and nothing queued", async () => {
    const port = (app!.server.address() as AddressInfo).port;
    const unfinished =
      "POST /v1/compactions HTTP/1.1\r\nHost: localhost\r\n" +
      `Authorization: Bearer ${TEST_TENANTS.acme}\r\nContent-Type: application/json\r\nContent-Length: 2\r\n`;
    const late = async () => parsed(await rawExchange(port, unfinished, { stall: true }));
    await expectRefusedAndCounted({ method: "unknown", route: "unparsed" }, 408, "request_timeout", late, port);
    const queue = new Queue(COMPACTION_QUEUE, { connection: { url: config.redisUrl }, prefix: config.queuePrefix });
    try {
      expect(await queue.getJobCounts("waiting", "prioritized", "delayed", "active", "completed", "failed")).toEqual({
        waiting: 0,
        prioritized: 0,
        delayed: 0,
        active: 0,
        completed: 0,
        failed: 0,
      });
    } finally {
      await queue.close();
    }
  });
});
