/**
 * Checks a PromQL query against the metrics a service exposes: the dashboard,
 * the alert rules and KEDA's trigger are checked with it, against the
 * registry in-process and against a scrape of the running processes.
 */
import { REASONS } from "../../src/core/index.js";
import { CALLBACK_OUTCOMES, JOB_OUTCOMES, SUMMARIZER_OUTCOMES, TOKEN_DIRECTIONS, UNKNOWN_REASON } from "../../src/metrics/metrics.js";
import { QUEUE_JOB_STATES } from "../../src/metrics/queueJobsCollector.js";
import { CALLBACK_QUEUE, COMPACTION_QUEUE } from "../../src/queue/queueNames.js";
import { findMetric, type ExposedMetrics } from "./exposedMetrics.js";
import { PLACEHOLDER } from "./goTemplate.js";
import { matcherValues, selectors } from "./promql.js";

/** Series Prometheus makes itself for every target, not the service. */
const PROMETHEUS_SERIES = new Set(["up"]);

/**
 * Labels the scrape adds to every series: `namespace`, `pod`, `job`, … by the
 * Prometheus Operator, `component` and `release` by the chart's ServiceMonitors.
 */
const TARGET_LABELS = new Set(["namespace", "release", "component", "job", "pod", "instance", "service", "container", "endpoint"]);

/** The closed sets of label values, per metric and label. */
const LABEL_VALUES: Record<string, Record<string, readonly string[]>> = {
  compactd_jobs_total: { outcome: JOB_OUTCOMES, reason: [...REASONS, UNKNOWN_REASON] },
  compactd_degraded_total: { reason: REASONS },
  compactd_still_above_threshold_total: { reason: REASONS },
  compactd_job_latency_seconds: { reason: REASONS },
  compactd_summarizer_requests_total: { outcome: SUMMARIZER_OUTCOMES },
  compactd_callbacks_total: { outcome: CALLBACK_OUTCOMES },
  compactd_summarizer_tokens_total: { direction: TOKEN_DIRECTIONS },
  compactd_queue_jobs: { state: QUEUE_JOB_STATES, queue: [COMPACTION_QUEUE, CALLBACK_QUEUE] },
};

export const IGNORE = new Set([PLACEHOLDER]);

/**
 * What is wrong with one query against the exposed metrics: unknown metric
 * names (histogram suffixes stripped), labels the metric does not have, label
 * values outside the metric's closed set. Empty when all is well.
 */
export function problemsOf(where: string, expr: string, exposed: ExposedMetrics): string[] {
  const problems: string[] = [];
  for (const { metric, matchers } of selectors(expr, IGNORE)) {
    if (PROMETHEUS_SERIES.has(metric)) continue;
    const found = findMetric(exposed, metric);
    if (found === undefined) {
      problems.push(`${where}: ${metric} is not a metric the service exposes`);
      continue;
    }
    const ownLabels = new Set([...(found.labelNames ?? []), ...(metric.endsWith("_bucket") ? ["le"] : [])]);
    const closedSets = LABEL_VALUES[metric] ?? {};
    for (const matcher of matchers) {
      if (TARGET_LABELS.has(matcher.label)) continue;
      if (found.labelNames !== undefined && !ownLabels.has(matcher.label)) {
        problems.push(`${where}: ${metric} has no label ${matcher.label}`);
      }
      const allowed = closedSets[matcher.label];
      if (allowed === undefined || matcher.value.includes(PLACEHOLDER)) continue;
      for (const value of matcherValues(matcher)) {
        if (!allowed.includes(value)) problems.push(`${where}: ${metric}{${matcher.label}} is never "${value}"`);
      }
    }
  }
  return problems;
}

