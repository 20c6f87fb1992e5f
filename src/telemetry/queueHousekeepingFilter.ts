/**
 * BullMQ's telemetry opens a span for its own housekeeping too: every
 * blocking wait for the next job, every lock renewal, every stalled-job
 * check, a few per second per worker, each a trace of its own with nothing
 * of a compaction in it. Exported, they would bury the traces an operator
 * looks for. This processor drops them on the way out: BullMQ's spans that
 * start a trace and are neither producing nor consuming a job. Its spans
 * inside a compaction's trace (adding a job, processing it, completing it)
 * pass, as do all of compactd's own.
 */
import { SpanKind } from "@opentelemetry/api";
import type { ReadableSpan, SpanProcessor } from "@opentelemetry/sdk-trace-node";

const BULLMQ_SCOPE = "bullmq";

function isQueueHousekeeping(span: ReadableSpan): boolean {
  return span.instrumentationScope.name === BULLMQ_SCOPE && span.parentSpanContext === undefined && span.kind === SpanKind.INTERNAL;
}

export function withoutQueueHousekeeping(inner: SpanProcessor): SpanProcessor {
  return {
    onStart: (span, parentContext) => inner.onStart(span, parentContext),
    onEnd: (span) => {
      if (!isQueueHousekeeping(span)) inner.onEnd(span);
    },
    forceFlush: () => inner.forceFlush(),
    shutdown: () => inner.shutdown(),
  };
}
