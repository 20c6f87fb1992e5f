/**
 * A summarizer decorator that counts every call in the `compactd_summarizer_*`
 * metrics and remembers, for the one job it wraps, whether a call failed in a
 * way that a later attempt could get past.
 *
 * The core turns every summarizer failure into a degraded result instead of
 * an error, which is right for an agent compacting in-process (a coarse
 * summary beats a stuck agent) but hides from the worker whether retrying the
 * job could still produce a real summary. This wrapper keeps that knowledge.
 */
import { SummarizationStalledError } from "../core/errors.js";
import { isOverflowError } from "../core/overflow.js";
import type { SummarizationRequest, SummarizationResponse, Summarizer } from "../core/summarizer.js";
import type { Metrics, SummarizerOutcome } from "../metrics/metrics.js";
import type { Logger } from "../telemetry/logger.js";

export interface InstrumentedSummarizer extends Summarizer {
  /**
   * Calls of this job that failed transiently: errors (rate limits, overload,
   * server errors, dropped streams) and stalls. Overflow and truncation are
   * not: the same request fails the same way next time.
   */
  readonly transientFailures: number;
}

/** `log` carries the job's fields; each failed call is logged with its kind and the provider's status. */
export function instrumentSummarizer(inner: Summarizer, metrics: Metrics, log: Logger): InstrumentedSummarizer {
  let transientFailures = 0;
  const count = (outcome: SummarizerOutcome, seconds: number): void => {
    metrics.summarizerRequestsTotal.inc({ outcome });
    metrics.summarizerDuration.observe(seconds);
    if (outcome === "error" || outcome === "stalled") transientFailures++;
  };

  return {
    name: inner.name,
    get transientFailures() {
      return transientFailures;
    },
    async summarize(request: SummarizationRequest): Promise<SummarizationResponse> {
      const started = performance.now();
      const seconds = (): number => (performance.now() - started) / 1000;
      let response: SummarizationResponse;
      try {
        response = await inner.summarize(request);
      } catch (err) {
        const outcome = failureOutcome(err, request.signal);
        if (outcome !== undefined) count(outcome, seconds());
        if (outcome === "error") metrics.summarizerErrorsTotal.inc({ status_code: providerStatus(err) });
        if (outcome !== undefined) {
          // The error's name and status only: a provider's message may quote the request.
          log.warn({ summarizerOutcome: outcome, statusCode: providerStatus(err), errorName: errorName(err), durationMs: Math.round(seconds() * 1000) }, "summarizer call failed");
        }
        throw err;
      }
      count(response.truncated ? "truncated" : "ok", seconds());
      if (response.usage !== undefined) {
        metrics.summarizerTokensTotal.inc({ direction: "input" }, response.usage.inputTokens);
        metrics.summarizerTokensTotal.inc({ direction: "output" }, response.usage.outputTokens);
      }
      return response;
    },
  };
}

/**
 * The HTTP status the provider answered a failed call with, as a label value:
 * the SDK's errors carry it as `status`; an error without one (connection
 * refused, a stream cut off or answering with an error event) is `none`.
 */
function providerStatus(err: unknown): string {
  const status = typeof err === "object" && err !== null ? (err as { status?: unknown }).status : undefined;
  return typeof status === "number" && Number.isInteger(status) ? String(status) : "none";
}

function errorName(err: unknown): string {
  return err instanceof Error ? err.name : typeof err;
}

/**
 * How a failed call counts. A call aborted for any reason but a stall was
 * cancelled by its job (a user's DELETE, a shutdown handing the job back):
 * nothing went wrong with the provider, so it is not counted at all.
 */
function failureOutcome(err: unknown, signal: AbortSignal): SummarizerOutcome | undefined {
  if (signal.aborted) return signal.reason instanceof SummarizationStalledError ? "stalled" : undefined;
  return isOverflowError(err) ? "overflow" : "error";
}
