/**
 * The metrics a service exposes, by name, read either from a prom-client
 * registry in-process or from a `/metrics` scrape (Prometheus text format),
 * so dashboards and alert rules can be checked against either.
 */
import type { Registry } from "prom-client";

export interface ExposedMetric {
  readonly type: string;
  /** Label names, or undefined when unknown (a scraped metric without samples yet). */
  readonly labelNames: ReadonlySet<string> | undefined;
}

export type ExposedMetrics = ReadonlyMap<string, ExposedMetric>;

/** Labels Prometheus adds to histogram and summary series beside the metric's own. */
const SERIES_LABELS = new Set(["le", "quantile"]);

export async function metricsOfRegistry(registry: Registry): Promise<ExposedMetrics> {
  const metrics = new Map<string, ExposedMetric>();
  for (const { name, type } of await registry.getMetricsAsJSON()) {
    // prom-client keeps a metric's configured label names on the instance.
    const metric = registry.getSingleMetric(name) as unknown as { labelNames?: readonly string[] } | undefined;
    metrics.set(name, { type: String(type), labelNames: new Set(metric?.labelNames ?? []) });
  }
  return metrics;
}

export function metricsOfExposition(text: string): ExposedMetrics {
  const types = new Map<string, string>();
  const labels = new Map<string, Set<string>>();
  for (const line of text.split("\n")) {
    const type = /^# TYPE (\S+) (\S+)/.exec(line);
    if (type !== null) {
      types.set(type[1]!, type[2]!);
      continue;
    }
    const sample = /^([A-Za-z_:][\w:]*)(?:\{(.*)\})?\s/.exec(line);
    if (sample === null) continue;
    const name = baseName(sample[1]!, types);
    const names = labels.get(name) ?? new Set<string>();
    for (const match of (sample[2] ?? "").matchAll(/([A-Za-z_]\w*)="/g)) if (!SERIES_LABELS.has(match[1]!)) names.add(match[1]!);
    labels.set(name, names);
  }
  return new Map([...types].map(([name, type]) => [name, { type, labelNames: labels.get(name) }]));
}

/** The metric a series name belongs to: `x_bucket`, `x_sum`, `x_count` belong to histogram or summary `x`. */
function baseName(series: string, types: ReadonlyMap<string, string>): string {
  const base = series.replace(/_(bucket|sum|count)$/, "");
  const type = types.get(base);
  return base !== series && (type === "histogram" || type === "summary") ? base : series;
}

/** Looks a series name up, histogram and summary suffixes included. */
export function findMetric(metrics: ExposedMetrics, series: string): ExposedMetric | undefined {
  const exact = metrics.get(series);
  if (exact !== undefined) return exact;
  const base = metrics.get(series.replace(/_(bucket|sum|count)$/, ""));
  if (base === undefined || (base.type !== "histogram" && base.type !== "summary")) return undefined;
  if (series.endsWith("_bucket") && base.type !== "histogram") return undefined;
  return base;
}
