/**
 * Makes one summarization request fit the model's window.
 *
 * If the transcript of the range being summarized is larger than the window
 * allows, the request itself overflows, the compaction fails, and the session
 * is stuck for good: it can neither continue nor shrink. So messages are left
 * out, their number is reported, and the prompt tells the model how many it is
 * not shown and where they were. Their file paths are still recorded by the
 * caller from the full range.
 *
 * Which ones: the newest messages say where the work stands, so they stay.
 * When the range opens with the user's request (a turn, or a session, starts
 * with it), that request stays too: without it the model sees answers to a
 * question it is not shown, and reports one step's detail as the goal. The
 * messages right after it are left out instead.
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

/**
 * Which messages are left out when a range does not fit: the oldest, or the
 * ones right after the range's opening request, which is kept.
 */
export type LeaveOut = "oldest" | "afterOpening";

export interface FittedInput {
  /** The transcript of the included messages, oldest first. */
  readonly transcript: string;
  /** The included messages: the newest ones of the range, after its opening request when that was kept. */
  readonly messages: readonly Message[];
  /** How many messages were left out. */
  readonly omitted: number;
  /**
   * Which ones: the range's oldest, or those right after its opening request.
   * `oldest` when asked to keep the opening but it alone did not fit.
   */
  readonly leftOut: LeaveOut;
}

/**
 * The newest messages of `messages` whose transcript fits `budgetTokens`,
 * after the first message when `leaveOut` is `afterOpening` and it fits.
 */
export function fitSummarizerInput(
  messages: readonly Message[],
  budgetTokens: number,
  estimator: TokenEstimator,
  leaveOut: LeaveOut = "oldest",
): FittedInput {
  const lines = messages.map(serializeMessage);
  const estimates = lines.map((line) => estimator.estimateText(line) + 1);
  let estimatedTotal = 0;
  for (const estimate of estimates) estimatedTotal += estimate;
  if (estimatedTotal <= budgetTokens * ESTIMATED_SHARE) {
    return { transcript: lines.join("\n"), messages, omitted: 0, leftOut: leaveOut };
  }
  const openingTokens = leaveOut === "afterOpening" && lines.length > 1 ? estimator.countText(lines[0]!) + 1 : Infinity;
  if (openingTokens <= budgetTokens) {
    const first = firstOfNewestThatFit(lines, estimates, 1, openingTokens, budgetTokens, estimator);
    return {
      transcript: [lines[0]!, ...lines.slice(first)].join("\n"),
      messages: [messages[0]!, ...messages.slice(first)],
      omitted: first - 1,
      leftOut: "afterOpening",
    };
  }
  const first = firstOfNewestThatFit(lines, estimates, 0, 0, budgetTokens, estimator);
  return { transcript: lines.slice(first).join("\n"), messages: messages.slice(first), omitted: first, leftOut: "oldest" };
}

/**
 * Index of the oldest line of the newest ones, back to `from`, that fit in
 * `budgetTokens` beside `used` tokens already taken; `lines.length` when none does.
 */
function firstOfNewestThatFit(
  lines: readonly string[],
  estimates: readonly number[],
  from: number,
  used: number,
  budgetTokens: number,
  estimator: TokenEstimator,
): number {
  let first = lines.length;
  for (let i = lines.length - 1; i >= from; i--) {
    const estimated = estimates[i]!;
    const cost = used + estimated <= budgetTokens * ESTIMATED_SHARE ? estimated : estimator.countText(lines[i]!) + 1;
    if (used + cost > budgetTokens) break;
    used += cost;
    first = i;
  }
  return first;
}
