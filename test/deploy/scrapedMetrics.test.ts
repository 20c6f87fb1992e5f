/**
 * The dashboard, the alert rules and KEDA's trigger against what a running API
 * and a running worker really serve on /metrics: the same check as
 * metricNames.test.ts, but from a scrape over HTTP after real compactions.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runApi, type RunningApi } from "../../src/api/runApi.js";
import { runWorker, type RunningWorker } from "../../src/worker/runWorker.js";
import { conversation, reactTurn } from "../helpers/conversations.js";
import { deleteKeysUnder } from "../helpers/redisTestPrefix.js";
import { bearer, serviceConfig } from "../helpers/serviceConfig.js";
import { waitUntil } from "../helpers/waitUntil.js";
import { dashboardQueries, kedaPrometheusQuery, readDashboard } from "./chart.js";
import { ruleExpressions } from "./helmRender.js";
import { metricsOfExposition, type ExposedMetrics } from "./exposedMetrics.js";
import { problemsOf } from "./metricProblems.js";
import { promtool } from "./promtool.js";

describe("metrics scraped from a running API and worker", () => {
  const config = serviceConfig("scraped-metrics", { ANTHROPIC_API_KEY: "" });
  let api: RunningApi;
  let worker: RunningWorker;
  let exposed: ExposedMetrics;
  let apiScrape: string;
  let workerScrape: string;

  beforeAll(async () => {
    worker = await runWorker(config, { onError: () => {} });
    api = await runApi({ ...config, port: 0 }, { logger: false }, "127.0.0.1");
    const base = `http://127.0.0.1:${api.port}`;
    const messages = conversation(...Array.from({ length: 5 }, () => reactTurn({ rounds: 6, toolResultChars: 3_500 })));
    const created = await fetch(`${base}/v1/compactions`, {
      method: "POST",
      headers: { ...bearer("acme"), "content-type": "application/json" },
      body: JSON.stringify({ messages, contextWindow: 100_000, settings: { keepRecentTokens: 8_000 } }),
    });
    expect(created.status).toBe(202);
    const { id } = (await created.json()) as { id: string };
    const view = await fetch(`${base}/v1/compactions/${id}?wait=20`, { headers: bearer("acme") });
    expect(((await view.json()) as { status: string }).status).toBe("completed");

    const scrape = async (port: number) => (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    // The queue gauge comes from whichever process holds the lease; wait until one exports it.
    let texts: string[] = [];
    await waitUntil(async () => {
      texts = [await scrape(api.port), await scrape(worker.metricsPort!)];
      return texts.some((t) => t.includes("compactd_queue_jobs{"));
    }, "a process exports compactd_queue_jobs", 20_000);
    [apiScrape, workerScrape] = texts as [string, string];
    exposed = metricsOfExposition(texts.join("\n"));
  }, 60_000);

  afterAll(async () => {
    await api?.close();
    await worker?.close();
    await deleteKeysUnder(config.queuePrefix);
  });

  it("serves every metric the dashboard queries", () => {
    expect(dashboardQueries(readDashboard()).flatMap(({ where, expr }) => problemsOf(where, expr, exposed))).toEqual([]);
  });

  it("serves every metric the alert rules query", async () => {
    expect((await ruleExpressions()).flatMap(({ alert, expr }) => problemsOf(`alert ${alert}`, expr, exposed))).toEqual([]);
  });

  it("serves the queue gauge KEDA's Prometheus trigger reads", () => {
    expect(problemsOf("ScaledObject query", kedaPrometheusQuery(), exposed)).toEqual([]);
  });

  it("passes `promtool check metrics` on the API's scrape and on the worker's", async () => {
    expect(await promtool(["check", "metrics"], apiScrape)).toEqual({ code: 0, output: "" });
    expect(await promtool(["check", "metrics"], workerScrape)).toEqual({ code: 0, output: "" });
  });

  it("counts the compaction it ran", () => {
    expect(exposed.get("compactd_jobs_total")?.labelNames).toEqual(new Set(["reason", "outcome"]));
  });
});
