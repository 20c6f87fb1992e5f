/**
 * One scrape of a registry, in the format the scraper asked for: OpenMetrics
 * when its Accept header prefers `application/openmetrics-text` (Prometheus
 * does by default), the Prometheus text format otherwise. Only OpenMetrics
 * carries exemplars, the trace ids on the latency histograms (exemplars.ts);
 * the text format stays what `promtool check metrics` and older scrapers read.
 *
 * prom-client renders OpenMetrics by switching the registry's content type,
 * and while doing so renames every counter in place (`compactd_jobs_total`
 * becomes `compactd_jobs`, the `_total` goes back on the sample lines only).
 * A text scrape after it would then export counters without their `_total`.
 * So each OpenMetrics rendering puts the names back, and a registry renders
 * one scrape at a time: a text scrape never sees the renamed counters.
 */
import { Registry, type RegistryContentType } from "prom-client";

export interface Exposition {
  readonly contentType: string;
  readonly body: string;
}

const OPENMETRICS = "application/openmetrics-text";
const TEXT = "text/plain";

/** The scrape in progress per registry; the next one starts after it. */
const inProgress = new WeakMap<Registry, Promise<unknown>>();

export function exposition(registry: Registry, accept: string | undefined): Promise<Exposition> {
  const render = (): Promise<Exposition> => (prefersOpenMetrics(accept) ? renderOpenMetrics(registry) : renderText(registry));
  const previous = inProgress.get(registry) ?? Promise.resolve();
  const scrape = previous.then(render, render);
  inProgress.set(
    registry,
    scrape.catch(() => undefined),
  );
  return scrape;
}

async function renderText(registry: Registry): Promise<Exposition> {
  return { contentType: Registry.PROMETHEUS_CONTENT_TYPE, body: await registry.metrics() };
}

async function renderOpenMetrics(textRegistry: Registry): Promise<Exposition> {
  const registry = textRegistry as Registry<RegistryContentType>;
  // prom-client's metric objects have a mutable `name` its types do not show.
  const metrics = registry.getMetricsAsArray() as unknown as { name: string }[];
  const names = metrics.map((metric) => metric.name);
  registry.setContentType(Registry.OPENMETRICS_CONTENT_TYPE);
  try {
    return { contentType: Registry.OPENMETRICS_CONTENT_TYPE, body: await registry.metrics() };
  } finally {
    registry.setContentType(Registry.PROMETHEUS_CONTENT_TYPE);
    metrics.forEach((metric, index) => {
      metric.name = names[index]!;
    });
  }
}

/**
 * Whether `accept` ranks OpenMetrics (any version) at least as high as the
 * text format. No header, or one naming neither, gets the text format.
 */
export function prefersOpenMetrics(accept: string | undefined): boolean {
  if (accept === undefined) return false;
  let openMetrics = 0;
  let text = 0;
  for (const range of accept.split(",")) {
    const [type = "", ...parameters] = range.split(";").map((part) => part.trim().toLowerCase());
    const qParameter = parameters.find((parameter) => parameter.startsWith("q="));
    const q = qParameter === undefined ? 1 : Number(qParameter.slice(2));
    if (!Number.isFinite(q)) continue;
    if (type === OPENMETRICS) openMetrics = Math.max(openMetrics, q);
    if (type === TEXT) text = Math.max(text, q);
  }
  return openMetrics > 0 && openMetrics >= text;
}
