import { afterEach, describe, expect, it } from "vitest";
import { createMetrics } from "../../src/metrics/metrics.js";
import { type MetricsServer, startMetricsServer } from "../../src/metrics/metricsServer.js";
import { rawExchange } from "../helpers/rawHttp.js";

const servers: MetricsServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

async function serve(probes: Parameters<typeof startMetricsServer>[0]["probes"]) {
  const metrics = createMetrics();
  const server = await startMetricsServer({ registry: metrics.registry, port: 0, host: "127.0.0.1", probes });
  servers.push(server);
  return { metrics, base: `http://127.0.0.1:${server.port}` };
}

describe("startMetricsServer", () => {
  it("serves the registry in the Prometheus text format on /metrics", async () => {
    const { metrics, base } = await serve({});
    metrics.stalledJobsTotal.inc(2);
    const response = await fetch(`${base}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("text/plain");
    expect(await response.text()).toMatch(/^compactd_stalled_jobs_total 2$/m);
  });

  it("answers a probe 200 when it is ok and 503 when it is not, with its detail", async () => {
    let consuming = true;
    const { base } = await serve({ "/healthz": () => ({ ok: consuming, detail: { consuming } }) });
    const healthy = await fetch(`${base}/healthz`);
    expect(healthy.status).toBe(200);
    expect(await healthy.json()).toEqual({ status: "ok", consuming: true });
    consuming = false;
    const unhealthy = await fetch(`${base}/healthz`);
    expect(unhealthy.status).toBe(503);
    expect(await unhealthy.json()).toEqual({ status: "unavailable", consuming: false });
  });

  it("turns a probe that throws into a 503 and keeps serving", async () => {
    const { base } = await serve({
      "/readyz": async () => {
        throw new Error("redis is away");
      },
    });
    const failed = await fetch(`${base}/readyz`);
    expect(failed.status).toBe(503);
    expect(await failed.json()).toMatchObject({ status: "unavailable", error: "Error: redis is away" });
    expect((await fetch(`${base}/metrics`)).status).toBe(200);
  });

  it("answers unknown paths 404 and other methods 405", async () => {
    const { base } = await serve({});
    expect((await fetch(`${base}/nope`)).status).toBe(404);
    const post = await fetch(`${base}/metrics`, { method: "POST", body: "x" });
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toBe("GET, HEAD");
  });

  it("does not echo a long path back in its 404", async () => {
    const { base } = await serve({});
    const path = `/${"a".repeat(8_000)}`;
    const response = await fetch(`${base}${path}`);
    expect(response.status).toBe(404);
    const body = await response.text();
    expect(body.length).toBeLessThan(300);
    expect(JSON.parse(body).error.code).toBe("not_found");
  });

  it("answers a request target the URL parser refuses 400, without a crash", async () => {
    const { base } = await serve({});
    const port = new URL(base).port;
    const answer = await rawExchange(Number(port), "GET //[ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect((await fetch(`${base}/metrics`)).status).toBe(200);
  });

  it("answers a malformed request line 400 and oversized headers 431, echoing neither", async () => {
    const { base } = await serve({});
    const port = Number(new URL(base).port);
    const garbled = await rawExchange(port, "NOT AN HTTP REQUEST\r\n\r\n");
    expect(garbled).toMatch(/^HTTP\/1\.1 400 /);
    const huge = "a".repeat(64_000);
    const oversized = await rawExchange(port, `GET /metrics HTTP/1.1\r\nHost: x\r\nX-Filler: ${huge}\r\n\r\n`);
    expect(oversized).toMatch(/^HTTP\/1\.1 431 /);
    expect(oversized).not.toContain("aaaa");
    expect((await fetch(`${base}/metrics`)).status).toBe(200);
  });
});
