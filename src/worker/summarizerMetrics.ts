/**
 * Feeds the `compactd_summarizer_*` metrics and the failed-call log lines
 * from the compactor's report of each summarizer call (CompactOptions.
 * onSummarizerCall). The compactor has already classified the call (see
 * core/degradation.ts); this only counts it. Whether a job is worth retrying
 * is read from the result's `degradation`, not from here.
 */
import type { SummarizerCallReport } from "../core/summarizer.js";
import { observeLatency } from "../metrics/exemplars.js";
import type { Metrics } from "../metrics/metrics.js";
import type { Logger } from "../telemetry/logger.js";

/** `log` carries the job's fields; each failed call is logged with its kind and the provider's status. */
export function summarizerMetrics(metrics: Metrics, log: Logger): (call: SummarizerCallReport) => void {
  return ({ outcome, durationMs, error, usage }) => {
    // Counted as classified: an empty answer is no summary, whatever the provider thought of it.
    metrics.summarizerRequestsTotal.inc({ outcome });
    observeLatency(metrics.summarizerDuration, {}, durationMs / 1000);
    if (usage !== undefined) {
      metrics.summarizerTokensTotal.inc({ direction: "input" }, usage.inputTokens);
      metrics.summarizerTokensTotal.inc({ direction: "output" }, usage.outputTokens);
    }
    if (error === undefined) return;
    // The provider's answer, whether it may pass (error) or refuses the request for good (rejected): a 401 is worth seeing by status.
    if (outcome === "error" || outcome === "rejected") metrics.summarizerErrorsTotal.inc({ status_code: providerStatus(error) });
    // The error's name and status only: a provider's message may quote the request.
    log.warn(
      { summarizerOutcome: outcome, statusCode: providerStatus(error), errorName: error instanceof Error ? error.name : typeof error, durationMs: Math.round(durationMs) },
      "summarizer call failed",
    );
  };
}

/**
 * The HTTP status the provider answered a failed call with, as a label value:
 * the SDK's errors carry it as `status`; an error without one (connection
 * refused, a stream cut off or answering with an error event) is `none`.
 */
export function providerStatus(err: unknown): string {
  const status = typeof err === "object" && err !== null ? (err as { status?: unknown }).status : undefined;
  return typeof status === "number" && Number.isInteger(status) ? String(status) : "none";
}
