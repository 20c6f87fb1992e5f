/**
 * Latency observations carry the trace they were measured in, as an
 * OpenMetrics exemplar (`trace_id`, `span_id`): a slow bucket on a Grafana
 * panel links straight to a trace that landed in it. The ids come from the
 * active span, so there is nothing to pass around; with tracing off (or the
 * trace not sampled) there is no span to point at and the observation has
 * no exemplar.
 */
import { isSpanContextValid, trace, TraceFlags } from "@opentelemetry/api";
import type { Histogram, LabelValues } from "prom-client";

/** The active span's ids as exemplar labels; empty when no sampled span is active. */
export function traceExemplar(): Record<string, string> {
  const spanContext = trace.getActiveSpan()?.spanContext();
  if (spanContext === undefined || !isSpanContextValid(spanContext) || (spanContext.traceFlags & TraceFlags.SAMPLED) === 0) return {};
  return { trace_id: spanContext.traceId, span_id: spanContext.spanId };
}

/** Observes `seconds` on a histogram created with `enableExemplars`, with the active trace as its exemplar. */
export function observeLatency<L extends string>(histogram: Histogram<L>, labels: LabelValues<L>, seconds: number): void {
  // prom-client types exemplar labels as the metric's own label names; they are not.
  histogram.observe({ labels, value: seconds, exemplarLabels: traceExemplar() as LabelValues<L> });
}
