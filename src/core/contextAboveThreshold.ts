/**
 * Whether a context that compaction cannot shrink is above the threshold all
 * the same.
 *
 * "Nothing to compact" is a stop signal, and on its own it reads as "all is
 * well". It is not when what is kept verbatim (the newest message or tool
 * call, the system prompt) is larger than the window leaves: the agent cannot
 * continue against its model, and asking for compaction again will not help.
 * The answer says so, as a completed compaction's `stillAboveThreshold` does.
 */
import type { Conversation } from "./message.js";
import { isAboveThreshold, threshold, type Settings } from "./settings.js";
import type { TokenEstimator } from "./tokenEstimator.js";

/**
 * Whether the whole context (the system prompt and every message) lies above
 * the threshold, in the same tokens as every budget: the provider's reported
 * `usageTokens` when the caller gave them, else exact counts.
 *
 * Ask it of the estimator the cut plan used, after the plan found nothing to
 * compact, so that it costs almost nothing:
 * - When the plan's byte-length fast path found everything after the system
 *   prompt within keep-recent, those messages are below a quarter of the
 *   usable window (normalizeSettings caps keep-recent there), so only a large
 *   system prompt or previous summary can put the context above; byte
 *   lengths settle that without tokenizing in all but such cases.
 * - Otherwise the plan's walk counted the tail exactly; those counts are
 *   cached, and the rest (a greeting before a pasted log, the system prompt)
 *   is counted newest first and only until the sum passes the threshold.
 *   The one message the walk may have counted only in part (the one that
 *   crossed keep-recent, when the plan did not count it whole) is counted
 *   again only when byte lengths leave the answer open, and the plan found
 *   it within a range no larger than an empty summary: a few hundred bytes.
 */
export function isContextAboveThreshold(conversation: Conversation, s: Settings, estimator: TokenEstimator): boolean {
  if (estimator.usageTokens !== undefined) return isAboveThreshold(s, estimator.usageTokens);
  const room = threshold(s);
  if (room <= 0) return false;
  const messages = conversation.messages;
  // Every o200k token stands for at least one byte: a context whose bytes fit cannot be above.
  let bound = Buffer.byteLength(conversation.systemText, "utf8");
  for (let i = messages.length - 1; i >= 0 && bound <= room; i--) bound += estimator.upperBound(messages[i]!);
  if (bound <= room) return false;
  let sum = 0;
  for (let i = messages.length - 1; i >= 0 && sum <= room; i--) sum += estimator.countUpTo(messages[i]!, room - sum);
  if (sum <= room) sum += estimator.systemTokens(conversation);
  return isAboveThreshold(s, sum);
}
