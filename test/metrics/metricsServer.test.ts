import { afterEach, describe, expect, it } from "vitest";
import { createMetrics } from "../../src/metrics/metrics.js";
import { type MetricsServer, startMetricsServer } from "../../src/metrics/metricsServer.js";

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
    expect((await fetch(`${base}/metrics`, { method: "POST" })).status).toBe(405);
  });
});
