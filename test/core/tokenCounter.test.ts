import fc from "fast-check";
import { O200K_TOKEN_SPLIT_REGEX } from "gpt-tokenizer/encodingParams/constants";
import { describe, expect, it } from "vitest";
import { parseConversation } from "../../src/core/formats/parseConversation.js";
import { countTextTokens, inBoundedPieces, MAX_PIECE_CHARS, o200kTokens } from "../../src/core/tokenCounter.js";
import { conversationText } from "../../bench/pricedText.js";
import { ADVERSARIAL_KINDS, adversarialText, adversarialTexts } from "../helpers/adversarialText.js";
import { conversation, reactTurn } from "../helpers/conversations.js";
import { pricedCorpusTexts } from "../helpers/corpus.js";

/** The tokenizer, wrapped so a test sees every text it is handed. */
function watchedTokenizer() {
  const handed: string[] = [];
  const count = inBoundedPieces((text) => {
    handed.push(text);
    return o200kTokens(text);
  });
  return { count, handed };
}

/** The longest piece o200k's own pre-tokenizer cuts `text` into: what its merge is quadratic in. */
function longestPreToken(text: string): number {
  let longest = 0;
  for (const [piece] of text.matchAll(O200K_TOKEN_SPLIT_REGEX)) longest = Math.max(longest, piece.length);
  return longest;
}

describe("counting tokens in bounded pieces", () => {
  it("never hands the tokenizer a pre-token longer than the bound, and counts adversarial text within 1% of the exact count", () => {
    fc.assert(
      fc.property(adversarialTexts(2 * MAX_PIECE_CHARS, 6 * MAX_PIECE_CHARS), (text) => {
        const tokenizer = watchedTokenizer();
        const bounded = tokenizer.count(text);
        for (const handed of tokenizer.handed) expect(longestPreToken(handed)).toBeLessThanOrEqual(MAX_PIECE_CHARS);
        const exact = o200kTokens(text);
        expect(Math.abs(bounded - exact)).toBeLessThanOrEqual(exact * 0.01);
      }),
      { numRuns: 120 },
    );
  });

  it("hands text without a long piece to the tokenizer whole, so its count is the tokenizer's own", () => {
    const texts = [
      conversationText(parseConversation(conversation(reactTurn({ rounds: 8, toolResultChars: 6_000, thinking: true })))),
      JSON.stringify({ deeply: { nested: [{ config: { with: ["arrays", 1, 2, 3] } }] } }, null, 2).repeat(40),
    ];
    for (const text of texts) {
      const tokenizer = watchedTokenizer();
      expect(tokenizer.count(text)).toBe(o200kTokens(text));
      expect(tokenizer.handed).toEqual([text]);
    }
  });

  it("counts every corpus session exactly as the tokenizer does", () => {
    for (const { name, text } of pricedCorpusTexts().filter((c) => c.source !== "tau-bench")) expect(countTextTokens(text), name).toBe(o200kTokens(text));
  });

  it("counts runs of white space longer than the bound exactly, as terminal output has them", () => {
    for (const run of [" ".repeat(3 * MAX_PIECE_CHARS + 17), "\n".repeat(2 * MAX_PIECE_CHARS + 5), "  \n".repeat(MAX_PIECE_CHARS)]) {
      const text = `$ ls -la${run}total 0`;
      const tokenizer = watchedTokenizer();
      expect(tokenizer.count(text)).toBe(o200kTokens(text));
      expect(tokenizer.handed.length).toBeGreaterThan(1);
    }
  });

  it("counts a million-character run like the same run counted exactly in slices a token period long", () => {
    // A run of one character tokenizes with a fixed period, so 125 exact counts of 8,000 characters add up to the whole.
    const slice = o200kTokens("x".repeat(8_000));
    expect(countTextTokens("x".repeat(1_000_000))).toBe(125 * slice);
  }, 60_000);
});

describe("counting up to a ceiling", () => {
  it("gives the exact count when it is at most the ceiling, and a number above the ceiling otherwise", () => {
    const texts = [
      conversationText(parseConversation(conversation(reactTurn({ rounds: 3, toolResultChars: 8_000 })))),
      ...ADVERSARIAL_KINDS.map((kind, seed) => adversarialText(kind, 30_000, seed)),
    ];
    for (const text of texts) {
      const exact = countTextTokens(text);
      expect(countTextTokens(text, exact)).toBe(exact);
      expect(countTextTokens(text, exact + 10)).toBe(exact);
      for (const ceiling of [0, 10, Math.floor(exact / 3), exact - 1]) expect(countTextTokens(text, ceiling)).toBeGreaterThan(ceiling);
    }
  });

  it("stops soon after passing the ceiling rather than counting the whole text", () => {
    const text = conversationText(parseConversation(conversation(reactTurn({ rounds: 4, toolResultChars: 50_000 }))));
    const exact = countTextTokens(text);
    expect(countTextTokens(text, 1_000)).toBeLessThan(1_100);
    expect(exact).toBeGreaterThan(20_000);
  });
});
