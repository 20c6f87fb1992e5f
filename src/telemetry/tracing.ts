/**
 * Distributed tracing with OpenTelemetry, off unless the standard OTEL_*
 * variables turn it on (see {@link tracingWanted}).
 *
 * A trace follows one compaction through every process it touches: the
 * agent's `traceparent` is the parent of the API's request span, BullMQ
 * carries the context from `queue.add` to the worker's `process` span
 * (bullmq-otel: the W3C fields ride in the job's options, not its data),
 * the summarizer calls and the callback delivery are children of that, and
 * the webhook request carries a `traceparent` of its own, so the receiver's
 * spans continue the agent's trace.
 *
 * When tracing is off, none of the SDK is loaded (the imports below are
 * dynamic): the spans the code opens go to OpenTelemetry's no-op API, the
 * queues get no telemetry and the API registers no tracing hooks.
 *
 * The OpenTelemetry API is process-global by design (one tracer provider,
 * one context manager, one propagator); whether this process traces is
 * global too, and the queue constructors read it through
 * {@link queueTelemetry} rather than have it passed through every layer.
 */
import { trace, type Tracer } from "@opentelemetry/api";
import type { Telemetry } from "bullmq";
import type { Config } from "../config.js";
import { settlesWithin } from "../core/settleWithin.js";

/** The instrumentation scope of compactd's own spans. */
const TRACER_NAME = "compactd";

export type TracingConfig = Pick<
  Config,
  "otelSdkDisabled" | "otelTracesExporter" | "otlpEndpoint" | "otlpTracesEndpoint" | "otelServiceName"
>;

export interface Tracing {
  /** Exports the spans still buffered and stops exporting. */
  shutdown(): Promise<void>;
}

/** How long a stopping process waits for its last spans to reach the collector. */
const FLUSH_ON_EXIT_MS = 3_000;

let bullmqTelemetry: Telemetry | undefined;

/**
 * Whether the environment asks for traces: `OTEL_SDK_DISABLED=true` or
 * `OTEL_TRACES_EXPORTER=none` say no; otherwise `OTEL_TRACES_EXPORTER=otlp`
 * or an OTLP endpoint say yes. Unlike the SDK's own default (export to
 * localhost when nothing is set), nothing set means no tracing: a service
 * should not post spans to a port nobody configured.
 */
export function tracingWanted(config: TracingConfig): boolean {
  if (config.otelSdkDisabled || config.otelTracesExporter === "none") return false;
  return config.otelTracesExporter === "otlp" || config.otlpEndpoint !== undefined || config.otlpTracesEndpoint !== undefined;
}

/**
 * Installs the SDK for this process when {@link tracingWanted}: a batching
 * OTLP/HTTP (protobuf) exporter, AsyncLocalStorage context, W3C trace
 * context propagation, and BullMQ telemetry for the queues created after
 * this call. Returns undefined, having installed nothing, otherwise.
 */
export async function startTracing(config: TracingConfig, defaultServiceName: string): Promise<Tracing | undefined> {
  if (!tracingWanted(config)) return undefined;
  const [{ NodeTracerProvider, BatchSpanProcessor }, { OTLPTraceExporter }, resources, { BullMQOtel }] = await Promise.all([
    import("@opentelemetry/sdk-trace-node"),
    import("@opentelemetry/exporter-trace-otlp-proto"),
    import("@opentelemetry/resources"),
    import("bullmq-otel"),
  ]);
  const { withoutQueueHousekeeping } = await import("./queueHousekeepingFilter.js");
  // The exporter reads the endpoint, headers, timeout and compression from the
  // OTEL_EXPORTER_OTLP_* variables itself; the sampler comes from OTEL_TRACES_SAMPLER.
  const exporter = new OTLPTraceExporter();
  const resource = resources
    .resourceFromAttributes({ "service.name": config.otelServiceName ?? defaultServiceName })
    .merge(resources.detectResources({ detectors: [resources.envDetector] }));
  const provider = new NodeTracerProvider({
    resource: resources.defaultResource().merge(resource),
    spanProcessors: [withoutQueueHousekeeping(new BatchSpanProcessor(exporter))],
  });
  provider.register();
  bullmqTelemetry = new BullMQOtel({ tracerName: "bullmq" });
  return {
    async shutdown() {
      bullmqTelemetry = undefined;
      // Flushing waits on the collector; one that is down must not hold up the exit.
      await settlesWithin(provider.shutdown(), FLUSH_ON_EXIT_MS);
    },
  };
}

/** The `telemetry` option of a BullMQ queue or worker: set only while tracing is on. */
export function queueTelemetry(): { telemetry?: Telemetry } {
  return bullmqTelemetry === undefined ? {} : { telemetry: bullmqTelemetry };
}

/** compactd's tracer: OpenTelemetry's no-op tracer while tracing is off. */
export function tracer(): Tracer {
  return trace.getTracer(TRACER_NAME);
}

/** Whether this process exports traces (see {@link startTracing}). */
export function tracingOn(): boolean {
  return bullmqTelemetry !== undefined;
}
