import { describe, expect, it } from "vitest";
import { isContextAboveThreshold } from "../../src/core/contextAboveThreshold.js";
import { planCut } from "../../src/core/cutPlan.js";
import { parseConversation } from "../../src/core/formats/parseConversation.js";
import { normalizeSettings, threshold } from "../../src/core/settings.js";
import { TokenEstimator } from "../../src/core/tokenEstimator.js";
import { conversation, reactTurn } from "../helpers/conversations.js";

const window32k = normalizeSettings({ contextWindow: 32_000 });
const greetingThenPaste = (words: number) => [
  { role: "user", content: "hi" },
  { role: "assistant", content: "hello" },
  { role: "user", content: "word ".repeat(words) },
];

/** planCut, then the question, on one estimator as the API and the compactor ask them; the tokenizer runs it took each. */
function nothingToCompact(input: unknown, s = window32k, usageTokens?: number) {
  const conv = parseConversation(input);
  const estimator = new TokenEstimator({ usageTokens });
  expect(planCut(conv, s, estimator)).toBeNull();
  const planned = estimator.tokenizedTexts;
  const above = isContextAboveThreshold(conv, s, estimator);
  return { above, planTokenized: planned, tokenized: estimator.tokenizedTexts - planned };
}

describe("isContextAboveThreshold after nothing to compact", () => {
  it("is true for a greeting before a paste larger than the window, tokenizing nothing the plan had not", () => {
    const { above, tokenized } = nothingToCompact(greetingThenPaste(60_000));
    expect(above).toBe(true);
    expect(tokenized).toBe(0);
  });

  it("is false for the same greeting before a paste under the threshold (still nothing to compact: the greeting cannot shrink)", () => {
    const s = normalizeSettings({ contextWindow: 32_000, keepRecentTokens: 1_000 });
    const { above } = nothingToCompact(greetingThenPaste(5_000), s);
    expect(above).toBe(false);
  });

  it("tokenizes nothing when the plan's byte-length fast path found everything within keep-recent, which is at most a quarter of the usable window", () => {
    const { above, planTokenized, tokenized } = nothingToCompact(conversation(reactTurn({ rounds: 2 })));
    expect(planTokenized).toBe(0);
    expect(above).toBe(false);
    expect(tokenized).toBe(0);
  });

  it("counts the system prompt, which that fast path does not see: one larger than the threshold alone is above it", () => {
    const messages = conversation(reactTurn({ rounds: 1 }));
    expect(nothingToCompact({ system: "rule ".repeat(20_000), messages }).above).toBe(true);
    expect(nothingToCompact({ system: "rule ".repeat(1_000), messages }).above).toBe(false);
  });

  it("reads the provider's usageTokens when given, strictly above the threshold as for a result", () => {
    // One message: nothing to compact whatever its size.
    const messages = [{ role: "user", content: "hi" }];
    const t = threshold(window32k);
    expect(nothingToCompact({ messages }, window32k, t).above).toBe(false);
    expect(nothingToCompact({ messages }, window32k, t + 1).above).toBe(true);
  });

  it("is false without a context window: there is no threshold", () => {
    const conv = parseConversation(greetingThenPaste(60_000));
    expect(isContextAboveThreshold(conv, normalizeSettings({}), new TokenEstimator())).toBe(false);
  });
});
