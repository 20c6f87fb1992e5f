/**
 * The text the token estimator prices, for the baseline: one tokenizer pass
 * over exactly what an eager estimator would have to tokenize.
 *
 * The estimator keeps its own version of this private, so this is a mirror.
 * A mirror that drifted would make the baseline cheaper or dearer than the
 * work it stands for, so `checkPricedText` holds it against the estimator's
 * exact counts on every conversation and the run fails on any difference.
 */
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import type { Conversation, Message } from "../src/core/message.js";
import { DOCUMENT_TOKENS, IMAGE_TOKENS, MESSAGE_OVERHEAD_TOKENS, TokenEstimator } from "../src/core/tokenEstimator.js";

export const PLAIN_TEXT = { disallowedSpecial: new Set<string>() } as const;

interface Priced {
  readonly text: string;
  /** Tokens of images and documents, which are priced at a fixed cost instead of tokenized. */
  readonly fixed: number;
}

function pricedMessage(message: Message): Priced {
  const parts: string[] = [];
  let fixed = 0;
  for (const b of message.blocks) {
    switch (b.type) {
      case "text":
      case "thinking":
      case "toolResult":
        parts.push(b.text);
        break;
      case "toolCall":
        parts.push(b.name, typeof b.input === "string" ? b.input : (JSON.stringify(b.input) ?? ""));
        break;
      case "media":
        fixed += b.media === "image" ? IMAGE_TOKENS : DOCUMENT_TOKENS;
        if (b.text !== undefined) parts.push(b.text);
        break;
      case "opaque":
        parts.push(b.json);
        break;
    }
  }
  return { text: parts.join("\n"), fixed };
}

/** The system prompt and every message's priced text, as one string for one tokenizer pass. */
export function conversationText(conversation: Conversation): string {
  const texts = conversation.messages.map((m) => pricedMessage(m).text);
  return [conversation.systemText, ...texts].join("\n");
}

/** Exact tokens of the whole conversation, as the estimator counts them when it counts everything. */
export function exactTotal(conversation: Conversation, estimator: TokenEstimator): number {
  let total = estimator.systemTokens(conversation);
  for (const m of conversation.messages) total += estimator.count(m);
  return total;
}

/** Throws when the mirror prices any message differently from the estimator. */
export function checkPricedText(conversation: Conversation, name: string): void {
  const estimator = new TokenEstimator();
  for (const m of conversation.messages) {
    const priced = pricedMessage(m);
    const mirrored = MESSAGE_OVERHEAD_TOKENS + priced.fixed + (priced.text === "" ? 0 : countTokens(priced.text, PLAIN_TEXT));
    const counted = estimator.count(m);
    if (mirrored !== counted) {
      throw new Error(`${name}: message ${m.index} prices at ${mirrored} tokens here but ${counted} in the estimator; update bench/pricedText.ts`);
    }
  }
}
