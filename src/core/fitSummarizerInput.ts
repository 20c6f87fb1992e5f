/**
 * Makes one summarization request fit the model's window.
 *
 * If the transcript of the range being summarized is larger than the window
 * allows, the request itself overflows, the compaction fails, and the session
 * is stuck for good: it can neither continue nor shrink. So the oldest messages
 * are left out, their number is reported, and the prompt tells the model how
 * many earlier messages it is not shown. Their file paths are still recorded
 * by the caller from the full range.
 */
import type { Message } from "./message.js";
import { serializeMessage } from "./serialize.js";
import type { TokenEstimator } from "./tokenEstimator.js";

/**
 * Share of the budget that may be filled on calibrated estimates alone. Lines
 * beyond it are counted exactly, so the request's size is only estimated where
 * the budget's own hold-back (a tenth of the window) absorbs the error, and the
 * tokenizer only runs near the boundary.
 */
const ESTIMATED_SHARE = 0.9;

export interface FittedInput {
  /** The transcript of the included messages, oldest first. */
  readonly transcript: string;
  /** The included messages (the newest ones of the range). */
  readonly messages: readonly Message[];
  /** How many of the oldest messages were left out. */
  readonly omitted: number;
}

/** Keeps the newest messages of `messages` whose transcript fits `budgetTokens`. */
export function fitSummarizerInput(
  messages: readonly Message[],
  budgetTokens: number,
  estimator: TokenEstimator,
): FittedInput {
  const lines = messages.map(serializeMessage);
  const estimates = lines.map((line) => estimator.estimateText(line) + 1);
  let estimatedTotal = 0;
  for (const estimate of estimates) estimatedTotal += estimate;
  if (estimatedTotal <= budgetTokens * ESTIMATED_SHARE) {
    return { transcript: lines.join("\n"), messages, omitted: 0 };
  }
  let used = 0;
  let first = lines.length;
  for (let i = lines.length - 1; i >= 0; i--) {
    const estimated = estimates[i]!;
    const cost = used + estimated <= budgetTokens * ESTIMATED_SHARE ? estimated : estimator.countText(lines[i]!) + 1;
    if (used + cost > budgetTokens) break;
    used += cost;
    first = i;
  }
  return { transcript: lines.slice(first).join("\n"), messages: messages.slice(first), omitted: first };
}
