/**
 * Why a summary fell back to the offline summary, as data.
 *
 * The compactor turns every summarizer failure into a degraded result rather
 * than an error (a coarse summary beats a stuck agent). Whoever holds the
 * result may still need to know what failed: a queue worker retries a job
 * whose summarizer failed in a way a later attempt can get past, and gives up
 * on one whose request can never fit. So each failed summarizer call is
 * classified here, once, where it happens, and the result carries the list;
 * its `degradedReason` is the same list as text.
 */
import { SummarizationStalledError, SummaryRefusedError, SummaryUnfinishedError } from "./errors.js";
import { isOverflowError } from "./overflow.js";
import { isRejectedRequest } from "./rejection.js";
import type { SummaryKind } from "./summarizer.js";

/**
 * How one summarizer call failed:
 * - `error`: the call threw (rate limit, overload, server error, dropped stream);
 * - `stalled`: the stream went silent past the stall timeout;
 * - `rejected`: the provider refused the request as it is (bad model, bad key, invalid request);
 * - `overflow`: the request did not fit the summarizer's window (refused, or stopped for it);
 * - `truncated`: the summary stopped at its token cap;
 * - `unfinished`: the answer stopped without being a finished summary, and not at the cap
 *   (Anthropic's `pause_turn`, `tool_use`, no stop reason, an unknown one);
 * - `refused`: the model declined to write the summary;
 * - `empty`: the summarizer answered with no text.
 */
export const DEGRADATION_CAUSES = ["error", "stalled", "rejected", "overflow", "truncated", "unfinished", "refused", "empty"] as const;

export type DegradationCause = (typeof DEGRADATION_CAUSES)[number];

/** One failed summarizer call of a compaction. */
export interface Degradation {
  /** Which summary the call was for. */
  readonly kind: SummaryKind;
  readonly cause: DegradationCause;
  /** The failure in words, for people: the provider's status and message, the cap, the timeout. */
  readonly message: string;
}

/**
 * Whether asking again at once with the same request is pointless, because
 * the request itself is what failed: too long for the window, refused by the
 * API as invalid, or refused by the model for its content. A cut-off,
 * unfinished or empty answer is worth a second attempt, since a model's
 * output varies from one call to the next; errors and stalls are passing.
 */
export function failsAgainForSameRequest(cause: DegradationCause): boolean {
  return cause === "overflow" || cause === "rejected" || cause === "refused";
}

/**
 * Whether the same request could succeed later: errors and stalls are the
 * provider's passing trouble; a rejected request, a refusal, an overflowing,
 * truncated, unfinished or empty summary comes back the same way from the
 * same request.
 */
export function isTransient(cause: DegradationCause): boolean {
  return cause === "error" || cause === "stalled";
}

/** The class of a summarizer call that threw (the caller's own cancellation aside). */
export function causeOfError(err: unknown): DegradationCause {
  if (err instanceof SummarizationStalledError) return "stalled";
  if (err instanceof SummaryUnfinishedError) return "unfinished";
  if (err instanceof SummaryRefusedError) return "refused";
  // Overflow first: the API refuses a request too long for the window with a 400 as well.
  if (isOverflowError(err)) return "overflow";
  return isRejectedRequest(err) ? "rejected" : "error";
}

/** A result's `degradedReason`: its degradations in words, null when there are none. */
export function degradedReasonOf(degradation: readonly Degradation[]): string | null {
  return degradation.length === 0 ? null : degradation.map((d) => d.message).join("; ");
}
