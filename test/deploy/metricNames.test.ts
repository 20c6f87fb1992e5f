import { Registry } from "prom-client";
import { beforeAll, describe, expect, it } from "vitest";
import { createMetrics } from "../../src/metrics/metrics.js";
import { dashboardQueries, kedaPrometheusQuery, readChartFile, readDashboard, readTemplate, readValues } from "./chart.js";
import { ruleExpressions } from "./helmRender.js";
import { metricsOfExposition, metricsOfRegistry, type ExposedMetrics } from "./exposedMetrics.js";
import { IGNORE, problemsOf } from "./metricProblems.js";
import { matcherValues, selectors } from "./promql.js";

describe("metric names in the dashboard and the alert rules", () => {
  let exposed: ExposedMetrics;
  beforeAll(async () => {
    exposed = await metricsOfRegistry(createMetrics(new Registry()).registry);
  });

  it("the dashboard queries only metrics, labels and label values the service exposes", () => {
    const queries = dashboardQueries(readDashboard());
    expect(queries.length).toBeGreaterThan(10);
    expect(queries.flatMap(({ where, expr }) => problemsOf(where, expr, exposed))).toEqual([]);
  });

  it("the alert rules query only metrics, labels and label values the service exposes", async () => {
    const rules = await ruleExpressions();
    expect(rules.map((rule) => rule.alert)).toEqual(
      expect.arrayContaining([
        "CompactdDegradedRatioHigh",
        "CompactdQueueBacklogGrowing",
        "CompactdJobsFailing",
        "CompactdJobsStalling",
        "CompactdCallbacksFailing",
        "CompactdNoWorkerConsuming",
      ]),
    );
    expect(rules.flatMap(({ alert, expr }) => problemsOf(`alert ${alert}`, expr, exposed))).toEqual([]);
  });

  it("KEDA's Prometheus trigger counts queued and running compactions from the queue gauge", () => {
    const query = kedaPrometheusQuery();
    expect(problemsOf("ScaledObject query", query, exposed)).toEqual([]);
    const [selector] = selectors(query, IGNORE);
    expect(selector?.metric).toBe("compactd_queue_jobs");
    const states = selector!.matchers.filter((m) => m.label === "state").flatMap(matcherValues);
    expect(states.sort()).toEqual(["active", "prioritized", "waiting"]);
  });

  it("the checks catch a misspelt metric, a label the metric lacks and a label value it never has", () => {
    expect(problemsOf("q", 'sum(rate(compactd_job_total{outcome="failed"}[5m]))', exposed)).toEqual([
      "q: compactd_job_total is not a metric the service exposes",
    ]);
    expect(problemsOf("q", 'sum(compactd_stalled_jobs_total{reason="overflow"})', exposed)).toEqual([
      "q: compactd_stalled_jobs_total has no label reason",
    ]);
    expect(problemsOf("q", 'sum(compactd_queue_jobs{state=~"wait|prioritized"})', exposed)).toEqual([
      'q: compactd_queue_jobs{state} is never "wait"',
    ]);
    expect(problemsOf("q", "histogram_quantile(0.99, sum by (le) (rate(compactd_job_duration_seconds_bucket[5m])))", exposed)).toEqual([]);
  });

  it("reads the same metrics from a /metrics scrape as from the registry", async () => {
    const metrics = createMetrics(new Registry());
    metrics.jobsTotal.inc({ reason: "overflow", outcome: "completed" });
    metrics.jobDuration.observe({ labels: { reason: "overflow" }, value: 1 });
    const scraped = metricsOfExposition(await metrics.registry.metrics());
    expect([...scraped.keys()].sort()).toEqual([...exposed.keys()].sort());
    expect(scraped.get("compactd_jobs_total")?.labelNames).toEqual(new Set(["reason", "outcome"]));
    expect(scraped.get("compactd_job_duration_seconds")?.labelNames).toEqual(new Set(["reason"]));
  });
});

describe("the Grafana dashboard", () => {
  const dashboard = readDashboard();

  it("takes its data source from the ${datasource} variable in every panel and query", () => {
    expect(dashboard.templating.list.find((v) => v.name === "datasource")?.type).toBe("datasource");
    for (const panel of dashboard.panels.filter((p) => p.type !== "row")) {
      expect(panel.datasource?.uid, panel.title).toBe("${datasource}");
      for (const target of panel.targets ?? []) expect(target.datasource?.uid, panel.title).toBe("${datasource}");
    }
  });

  it("has the panels operators need", () => {
    const titles = dashboard.panels.map((panel) => panel.title);
    expect(titles).toEqual(
      expect.arrayContaining([
        "Throughput by outcome",
        "Tokens per compaction",
        "Tokens saved",
        "Degraded ratio",
        "Job duration",
        "Queue wait",
        "Summarizer errors by kind",
        "Callback outcomes",
        "Queue depth by state",
        "Stalled jobs",
        "Workers up",
        "Event-loop delay",
      ]),
    );
    const ids = dashboard.panels.map((panel) => panel.id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("ships as a ConfigMap the Grafana sidecar picks up", () => {
    expect(readTemplate("dashboard-configmap.yaml")).toContain('.Files.Get "dashboards/compactd.json"');
    const values = readValues() as { metrics: { dashboard: { labels: Record<string, string> } } };
    expect(values.metrics.dashboard.labels).toEqual({ grafana_dashboard: "1" });
    expect(() => JSON.parse(readChartFile("dashboards/compactd.json"))).not.toThrow();
  });
});
