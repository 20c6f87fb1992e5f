import type { LabelValues } from "prom-client";
import { describe, expect, it } from "vitest";
import { exposition, prefersOpenMetrics } from "../../src/metrics/exposition.js";
import { createMetrics } from "../../src/metrics/metrics.js";
import { metricsOfExposition } from "../deploy/exposedMetrics.js";

/** What Prometheus 2.x and 3.x send by default. */
const PROMETHEUS_ACCEPT =
  "application/openmetrics-text;version=1.0.0;q=0.5,application/openmetrics-text;version=0.0.1;q=0.4,text/plain;version=0.0.4;q=0.3,*/*;q=0.2";

describe("exposition", () => {
  it("serves OpenMetrics to a scraper that prefers it and the text format to everyone else", () => {
    expect(prefersOpenMetrics(PROMETHEUS_ACCEPT)).toBe(true);
    expect(prefersOpenMetrics("application/openmetrics-text")).toBe(true);
    expect(prefersOpenMetrics(undefined)).toBe(false);
    expect(prefersOpenMetrics("*/*")).toBe(false);
    expect(prefersOpenMetrics("text/plain;version=0.0.4")).toBe(false);
    expect(prefersOpenMetrics("text/plain;q=0.9, application/openmetrics-text;q=0.5")).toBe(false);
    expect(prefersOpenMetrics("application/openmetrics-text;q=0")).toBe(false);
  });

  it("keeps the counters' _total in the text format after an OpenMetrics scrape, even when the two interleave", async () => {
    const metrics = createMetrics();
    metrics.jobsTotal.inc({ reason: "overflow", outcome: "completed" });
    const [openMetrics, text] = await Promise.all([exposition(metrics.registry, PROMETHEUS_ACCEPT), exposition(metrics.registry, undefined)]);
    expect(openMetrics.contentType).toContain("application/openmetrics-text");
    expect(openMetrics.body).toContain("# TYPE compactd_jobs counter");
    expect(openMetrics.body).toContain('compactd_jobs_total{reason="overflow",outcome="completed"} 1');
    expect(openMetrics.body.endsWith("# EOF\n")).toBe(true);
    for (const scrape of [text, await exposition(metrics.registry, "text/plain")]) {
      expect(scrape.contentType).toContain("text/plain; version=0.0.4");
      expect(scrape.body).toContain("# TYPE compactd_jobs_total counter");
      expect(scrape.body).toContain('compactd_jobs_total{reason="overflow",outcome="completed"} 1');
    }
    // And the two formats export the same metrics.
    expect(metricsOfExposition(text.body)).toEqual(metricsOfExposition((await exposition(metrics.registry, undefined)).body));
  });

  it("puts the active trace on a latency observation as an exemplar, in OpenMetrics only", async () => {
    const metrics = createMetrics();
    // As observeLatency does (exemplars.ts) with a trace active; prom-client types exemplar labels as the metric's own.
    const exemplarLabels = { trace_id: "0af7651916cd43dd8448eb211c80319c" } as LabelValues<"reason">;
    metrics.jobLatency.observe({ labels: { reason: "overflow" }, value: 3, exemplarLabels });
    const openMetrics = (await exposition(metrics.registry, PROMETHEUS_ACCEPT)).body;
    expect(openMetrics).toMatch(/compactd_job_latency_seconds_bucket\{le="5",reason="overflow"\} 1 # \{trace_id="0af7651916cd43dd8448eb211c80319c"\} 3 \d/);
    expect((await exposition(metrics.registry, undefined)).body).not.toContain("trace_id");
  });
});
