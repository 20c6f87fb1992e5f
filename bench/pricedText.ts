/**
 * The text the token estimator prices, for the baseline: one tokenizer pass
 * over exactly what an eager estimator would have to tokenize.
 *
 * It is the estimator's own `pricedParts`, so the baseline prices exactly
 * the work it stands for.
 */
import type { Conversation } from "../src/core/message.js";
import { pricedParts, type TokenEstimator } from "../src/core/tokenEstimator.js";

/** The system prompt and every message's priced text, as one string for one tokenizer pass. */
export function conversationText(conversation: Conversation): string {
  const texts = conversation.messages.map((m) => pricedParts(m).parts.join("\n"));
  return [conversation.systemText, ...texts].join("\n");
}

/** Exact tokens of the whole conversation, as the estimator counts them when it counts everything. */
export function exactTotal(conversation: Conversation, estimator: TokenEstimator): number {
  let total = estimator.systemTokens(conversation);
  for (const m of conversation.messages) total += estimator.count(m);
  return total;
}
