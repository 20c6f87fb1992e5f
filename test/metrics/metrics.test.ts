import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { REASONS } from "../../src/core/index.js";
import {
  CALLBACK_OUTCOMES,
  createMetrics,
  JOB_OUTCOMES,
  SUMMARIZER_ERROR_STATUSES,
  SUMMARIZER_OUTCOMES,
  TOKEN_DIRECTIONS,
  UNKNOWN_REASON,
} from "../../src/metrics/metrics.js";

/** Every metric compactd exports, with its type. */
const REQUIRED: Record<string, string> = {
  compactd_jobs_total: "counter",
  compactd_tokens_before: "histogram",
  compactd_tokens_after: "histogram",
  compactd_degraded_total: "counter",
  compactd_still_above_threshold_total: "counter",
  compactd_job_duration_seconds: "histogram",
  compactd_queue_wait_seconds: "histogram",
  compactd_summarizer_requests_total: "counter",
  compactd_summarizer_tokens_total: "counter",
  compactd_summarizer_duration_seconds: "histogram",
  compactd_callbacks_total: "counter",
  compactd_callback_duration_seconds: "histogram",
  compactd_queue_jobs: "gauge",
  compactd_stalled_jobs_total: "counter",
  compactd_omitted_messages_total: "counter",
  compactd_split_turns_total: "counter",
  compactd_job_latency_seconds: "histogram",
  compactd_summarizer_errors_total: "counter",
  compactd_http_requests_total: "counter",
  compactd_http_request_duration_seconds: "histogram",
};

function bucketBounds(text: string, name: string): number[] {
  return [...text.matchAll(new RegExp(`^${name}_bucket\\{[^}]*\\ble="([^"]+)"`, "gm"))]
    .map((match) => match[1] ?? "")
    .filter((le) => le !== "+Inf")
    .map(Number);
}

describe("createMetrics", () => {
  it("registers every metric with its type and the compactd_ prefix", async () => {
    const metrics = createMetrics();
    const exported = await metrics.registry.getMetricsAsJSON();
    const ours = Object.fromEntries(exported.filter((m) => m.name.startsWith("compactd_")).map((m) => [m.name, m.type]));
    expect(ours).toEqual(REQUIRED);
  });

  it("follows Prometheus naming: counters end in _total, durations are in seconds", async () => {
    const metrics = createMetrics();
    for (const metric of await metrics.registry.getMetricsAsJSON()) {
      if (!metric.name.startsWith("compactd_")) continue;
      expect(metric.name).toMatch(/^[a-z_][a-z0-9_]*$/);
      expect(metric.name.endsWith("_total")).toBe(String(metric.type) === "counter");
      if (metric.name.includes("duration") || metric.name.includes("wait")) expect(metric.name).toMatch(/_seconds$/);
      expect(metric.help.length).toBeGreaterThan(10);
    }
  });

  it("exports Node's default process metrics beside its own", async () => {
    const text = await createMetrics().registry.metrics();
    expect(text).toMatch(/^process_cpu_user_seconds_total /m);
    expect(text).toMatch(/^process_resident_memory_bytes /m);
    expect(text).toMatch(/^nodejs_eventloop_lag_seconds /m);
  });

  it("sizes histogram buckets for minute-long LLM calls and 2M-token contexts", async () => {
    const metrics = createMetrics();
    metrics.jobDuration.observe({ labels: { reason: "overflow" }, value: 1 });
    metrics.queueWait.observe({ labels: { reason: "threshold" }, value: 1 });
    metrics.summarizerDuration.observe({ value: 1 });
    metrics.tokensBefore.observe(1);
    metrics.tokensAfter.observe(1);
    const text = await metrics.registry.metrics();
    for (const name of ["compactd_job_duration_seconds", "compactd_summarizer_duration_seconds", "compactd_queue_wait_seconds"]) {
      expect(Math.max(...bucketBounds(text, name))).toBeGreaterThanOrEqual(300);
    }
    for (const name of ["compactd_tokens_before", "compactd_tokens_after"]) {
      expect(Math.max(...bucketBounds(text, name))).toBe(2_000_000);
      expect(Math.min(...bucketBounds(text, name))).toBeLessThanOrEqual(1_000);
    }
  });

  it("creates independent sets on separate registries, as tests and `dev` need", async () => {
    const first = createMetrics(new Registry());
    const second = createMetrics(new Registry());
    first.jobsTotal.inc({ reason: "overflow", outcome: "completed" });
    expect(await first.registry.metrics()).toContain('compactd_jobs_total{reason="overflow",outcome="completed"} 1');
    expect(await second.registry.metrics()).toContain('compactd_jobs_total{reason="overflow",outcome="completed"} 0');
  });

  it("exports every label set of every labelled counter at 0 before its first event, so rate() sees the first one", async () => {
    const text = await createMetrics().registry.metrics();
    const expected = [
      ...REASONS.flatMap((reason) => JOB_OUTCOMES.map((outcome) => `compactd_jobs_total{reason="${reason}",outcome="${outcome}"} 0`)),
      `compactd_jobs_total{reason="${UNKNOWN_REASON}",outcome="failed"} 0`,
      ...REASONS.map((reason) => `compactd_degraded_total{reason="${reason}"} 0`),
      ...REASONS.map((reason) => `compactd_still_above_threshold_total{reason="${reason}"} 0`),
      ...REASONS.map((reason) => `compactd_job_duration_seconds_count{reason="${reason}"} 0`),
      ...REASONS.map((reason) => `compactd_queue_wait_seconds_count{reason="${reason}"} 0`),
      ...REASONS.map((reason) => `compactd_job_latency_seconds_count{reason="${reason}"} 0`),
      ...SUMMARIZER_ERROR_STATUSES.map((status) => `compactd_summarizer_errors_total{status_code="${status}"} 0`),
      ...SUMMARIZER_OUTCOMES.map((outcome) => `compactd_summarizer_requests_total{outcome="${outcome}"} 0`),
      ...TOKEN_DIRECTIONS.map((direction) => `compactd_summarizer_tokens_total{direction="${direction}"} 0`),
      ...CALLBACK_OUTCOMES.map((outcome) => `compactd_callbacks_total{outcome="${outcome}"} 0`),
      "compactd_stalled_jobs_total 0",
      "compactd_summarizer_duration_seconds_count 0",
    ];
    const lines = new Set(text.split("\n"));
    expect(expected.filter((line) => !lines.has(line))).toEqual([]);
  });

  it("leaves out the default gauges named like counters, which promtool check metrics rejects", async () => {
    const text = await createMetrics().registry.metrics();
    expect(text).not.toMatch(/^# TYPE \S+_total gauge/m);
    expect(text).toMatch(/^# TYPE nodejs_active_handles gauge/m);
  });
});
