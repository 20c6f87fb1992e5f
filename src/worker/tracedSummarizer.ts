/**
 * A span per summarizer call, a child of the job's (BullMQ's `process`
 * span): which model, which of the two summaries and which of its attempts,
 * the provider's status when the call failed, the token counts when it
 * answered. Never the prompt or the summary: those are the user's
 * conversation. How a failure counts (error, stall, overflow) is the
 * compactor's to decide and the metrics' to show (summarizerMetrics.ts); the
 * span records what the call itself saw.
 */
import { SpanKind, SpanStatusCode } from "@opentelemetry/api";
import type { Summarizer, SummaryKind } from "../core/summarizer.js";
import { tracer } from "../telemetry/tracing.js";
import { providerStatus } from "./summarizerMetrics.js";

/** `inner` with each call in a span; one per job, so attempts count per job. */
export function traceSummarizerCalls(inner: Summarizer): Summarizer {
  const attempts: Record<SummaryKind, number> = { history: 0, turnPrefix: 0 };
  return {
    name: inner.name,
    summarize(request) {
      attempts[request.kind] += 1;
      const attributes = {
        "gen_ai.system": inner.name,
        ...(inner.model !== undefined && { "gen_ai.request.model": inner.model }),
        "gen_ai.request.max_tokens": request.maxTokens,
        "compactd.summary.kind": request.kind,
        "compactd.summary.attempt": attempts[request.kind],
      };
      return tracer().startActiveSpan("summarize", { kind: SpanKind.CLIENT, attributes }, async (span) => {
        try {
          const response = await inner.summarize(request);
          span.setAttribute("compactd.summary.truncated", response.truncated);
          if (response.usage !== undefined) {
            span.setAttributes({ "gen_ai.usage.input_tokens": response.usage.inputTokens, "gen_ai.usage.output_tokens": response.usage.outputTokens });
          }
          return response;
        } catch (err) {
          const status = providerStatus(err);
          span.setAttributes({
            "error.type": err instanceof Error ? err.name : typeof err,
            ...(status !== "none" && { "http.response.status_code": Number(status) }),
            "compactd.summary.aborted": request.signal.aborted,
          });
          span.setStatus({ code: SpanStatusCode.ERROR });
          throw err;
        } finally {
          span.end();
        }
      });
    },
  };
}
