/**
 * What the API process itself exports: the queue sizes (it competes for the
 * lease like a worker, so a backlog shows while no worker runs) and a count
 * and timing of every HTTP answer, errors included.
 */
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp } from "../../src/api/buildApp.js";
import { createMetrics, type Metrics } from "../../src/metrics/metrics.js";
import { markedRequest } from "../helpers/markedConversation.js";
import { deleteKeysUnder } from "../helpers/redisTestPrefix.js";
import { bearer, serviceConfig } from "../helpers/serviceConfig.js";
import { waitUntil } from "../helpers/waitUntil.js";

const config = { ...serviceConfig("api-metrics", { ANTHROPIC_API_KEY: "", COMPACTD_BODY_LIMIT_BYTES: "100000" }) };
let app: FastifyInstance;
let metrics: Metrics;

beforeAll(async () => {
  metrics = createMetrics();
  app = await buildApp(config, { metrics });
});
afterAll(async () => {
  await app.close();
  await deleteKeysUnder(config.queuePrefix);
});

function sample(text: string, series: string): number | undefined {
  const line = text.split("\n").find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe("the API's own metrics", () => {
  it("exports the backlog of queued compactions while no worker runs", async () => {
    for (const marker of ["one", "two", "three"]) {
      const response = await app.inject({ method: "POST", url: "/v1/compactions", headers: bearer("acme"), payload: markedRequest(marker) });
      expect(response.statusCode).toBe(202);
    }
    const queued = async (): Promise<number> => {
      const text = (await app.inject({ method: "GET", url: "/metrics" })).body;
      return ["waiting", "prioritized"]
        .map((state) => sample(text, `compactd_queue_jobs{queue="compactions",state="${state}"}`) ?? 0)
        .reduce((a, b) => a + b, 0);
    };
    await waitUntil(async () => (await queued()) === 3, "the API exports 3 queued compactions", 30_000);
  });

  it("counts every answer by method, route pattern and status, errors and refusals included", async () => {
    // The answers the OpenAPI document lists exist at 0 before the first request.
    const before = await metrics.registry.metrics();
    expect(sample(before, 'compactd_http_requests_total{method="POST",route="/v1/compactions",status_code="413"}')).toBe(0);
    expect(sample(before, 'compactd_http_requests_total{method="DELETE",route="/v1/compactions/:id",status_code="409"}')).toBe(0);
    const ask = (method: "GET" | "POST", url: string, payload?: unknown) =>
      app.inject({ method, url, headers: { ...bearer("acme"), "content-type": "application/json" }, ...(payload !== undefined && { payload: payload as object }) });
    expect((await ask("POST", "/v1/compactions", { contextWindow: 1000 })).statusCode).toBe(400);
    expect((await ask("POST", "/v1/compactions", { messages: "x".repeat(200_000) })).statusCode).toBe(413);
    expect((await ask("GET", "/v1/compactions/no-such-job")).statusCode).toBe(404);
    expect((await ask("GET", "/nowhere")).statusCode).toBe(404);
    const text = await metrics.registry.metrics();
    expect(sample(text, 'compactd_http_requests_total{method="POST",route="/v1/compactions",status_code="202"}')).toBe(3);
    expect(sample(text, 'compactd_http_requests_total{method="POST",route="/v1/compactions",status_code="400"}')).toBe(1);
    expect(sample(text, 'compactd_http_requests_total{method="POST",route="/v1/compactions",status_code="413"}')).toBe(1);
    expect(sample(text, 'compactd_http_requests_total{method="GET",route="/v1/compactions/:id",status_code="404"}')).toBe(1);
    expect(sample(text, 'compactd_http_requests_total{method="GET",route="unmatched",status_code="404"}')).toBe(1);
    expect(sample(text, 'compactd_http_request_duration_seconds_count{method="POST",route="/v1/compactions"}')).toBe(5);
    expect(text).not.toContain("no-such-job");
  });
});
