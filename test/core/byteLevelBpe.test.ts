import fc from "fast-check";
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import { describe, expect, it } from "vitest";
import { byteLevelBpeCounter } from "../../src/core/byteLevelBpe.js";
import { buildRankTable } from "../../src/core/rankTable.js";
import { o200kTokens } from "../../src/core/tokenCounter.js";
import { adversarialTexts } from "../helpers/adversarialText.js";
import { pricedCorpusTexts } from "../helpers/corpus.js";

/** gpt-tokenizer's own count, the reference: special-token strings as plain text, as compactd counts them. */
const reference = (text: string): number => countTokens(text, { disallowedSpecial: new Set<string>() });

describe("compactd's BPE merge counts as gpt-tokenizer does, and as o200k does where the two differ", () => {
  it("on every corpus session's priced text", () => {
    for (const { name, text } of pricedCorpusTexts()) expect(o200kTokens(text), name).toBe(reference(text));
  });

  it("on every kind of adversarial text, at lengths gpt-tokenizer still counts quickly", () => {
    fc.assert(
      fc.property(adversarialTexts(1, 3_000), (text) => {
        expect(o200kTokens(text)).toBe(reference(text));
      }),
      { numRuns: 300 },
    );
  });

  it("on arbitrary Unicode, lone surrogates and special-token strings included", () => {
    const specials = fc.constantFrom("<|endoftext|>", "<|endofprompt|>", "<|im_start|>", " ", "\n\n", "\r\n", "'s", "’ll");
    const text = fc.array(fc.oneof(fc.string({ unit: "grapheme" }), fc.string({ unit: "binary" }), fc.string({ unit: "binary-ascii" }), specials), { maxLength: 40 });
    fc.assert(
      fc.property(text, (parts) => {
        // The byte-order mark is the one known difference (next test).
        const joined = parts.join("").replaceAll("\uFEFF", "");
        expect(o200kTokens(joined)).toBe(reference(joined));
      }),
      { numRuns: 2_000 },
    );
  });

  it("counts a byte-order mark as the vocabulary's one token, where gpt-tokenizer's lookup loses it", () => {
    // o200k has U+FEFF's three bytes as one token (rank 5574). gpt-tokenizer looks a byte
    // sequence up by decoding it with a TextDecoder that strips a leading BOM, misses that
    // token and counts two. compactd's table is keyed by bytes and finds it.
    expect(o200kTokens("\uFEFF")).toBe(1);
    expect(o200kTokens("a\uFEFFb")).toBe(3);
    expect(reference("\uFEFF")).toBe(2);
  });

  it("merges a long run the way the vocabulary does, token by token", () => {
    // A run's tokens follow from the merge order alone; a slip in the heap's order shows here.
    for (const run of ["x".repeat(2_000), "ab".repeat(1_500), "中".repeat(1_000), "😀".repeat(700), "=".repeat(3_000), " ".repeat(2_500)]) {
      expect(o200kTokens(run)).toBe(reference(run));
    }
  });
});

describe("the pieces a counter walks", () => {
  it("are the split pattern's matches, also for a pattern that skips text between them, and a ceiling still stops the count", () => {
    // A vocabulary of the bytes alone: every byte a token, so a piece counts its UTF-8 length.
    const bytes = Array.from({ length: 256 }, (_, b) => [b]);
    const gappy = byteLevelBpeCounter(() => buildRankTable(bytes), /[a-z]+|\d{1,3}/gu);
    const viaMatchAll = (text: string): number => [...text.matchAll(/[a-z]+|\d{1,3}/gu)].reduce((n, [piece]) => n + Buffer.byteLength(piece), 0);
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom("a", "b", "z", "1", "9", " ", ",", "é", "🙂") , maxLength: 60 }), (text) => {
        expect(gappy(text)).toBe(viaMatchAll(text));
      }),
      { numRuns: 1_000 },
    );
    expect(gappy("abc, de 12345", 2)).toBeGreaterThan(2);
    expect(gappy("abc, de 12345", 2)).toBeLessThan(viaMatchAll("abc, de 12345"));
  });
});
