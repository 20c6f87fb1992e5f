/**
 * Built conversations of a chosen size, to show how cost grows with length.
 *
 * Turns vary in rounds, parallel calls, result sizes and thinking on a fixed
 * cycle, so every size has the same mix and only the length differs. Turns are
 * added until the exact count reaches the target.
 */
import { parseConversation } from "../src/core/formats/parseConversation.js";
import { TokenEstimator } from "../src/core/tokenEstimator.js";
import { conversation, reactTurn, type RawMessage } from "../test/helpers/conversations.js";
import { exactTotal } from "./pricedText.js";

/** Tool result sizes in characters: mostly ordinary, with a large one now and then. */
const RESULT_CHARS = [300, 1_200, 4_000, 150, 9_000, 800, 2_500] as const;

function turn(k: number): RawMessage[] {
  return reactTurn({
    rounds: 2 + (k % 5),
    parallelCalls: 1 + (k % 3),
    toolResultChars: RESULT_CHARS[k % RESULT_CHARS.length]!,
    thinking: k % 2 === 0,
    requestChars: 200 + ((k * 137) % 600),
    answerChars: 300 + ((k * 251) % 1_200),
    turnId: `turn-${k + 1}`,
  });
}

export function generatedConversation(targetTokens: number): RawMessage[] {
  const turns: RawMessage[][] = [];
  const estimator = new TokenEstimator();
  let total = 0;
  for (let k = 0; total < targetTokens; k++) {
    const next = turn(k);
    total += exactTotal(parseConversation(next), estimator);
    turns.push(next);
  }
  return conversation(...turns);
}
