/**
 * The rank table's binary form (rankTable.ts): read back, it counts exactly
 * as the table it was written from; damaged, it is refused with a reason
 * rather than read into a table that would count wrongly.
 */
import fc from "fast-check";
import { O200K_TOKEN_SPLIT_REGEX } from "gpt-tokenizer/encodingParams/constants";
import { describe, expect, it } from "vitest";
import { byteLevelBpeCounter } from "../../src/core/byteLevelBpe.js";
import { buildRankTable, rankTableBytes, rankTableFromBytes } from "../../src/core/rankTable.js";
import { o200kTableBytes, o200kTokens } from "../../src/core/tokenCounter.js";
import { adversarialTexts } from "../helpers/adversarialText.js";
import { pricedCorpusTexts } from "../helpers/corpus.js";

const written = o200kTableBytes();

describe("o200k's table read back from its bytes", () => {
  const readBack = byteLevelBpeCounter(() => rankTableFromBytes(written), O200K_TOKEN_SPLIT_REGEX);

  it("counts every corpus session's priced text as the table built from the vocabulary does", () => {
    for (const { name, text } of pricedCorpusTexts()) expect(readBack(text), name).toBe(o200kTokens(text));
  });

  it("counts adversarial text and arbitrary Unicode as the built table does", () => {
    fc.assert(
      fc.property(adversarialTexts(1, 3_000), (text) => {
        expect(readBack(text)).toBe(o200kTokens(text));
      }),
      { numRuns: 200 },
    );
    fc.assert(
      fc.property(fc.string({ unit: "grapheme", maxLength: 300 }), (text) => {
        expect(readBack(text)).toBe(o200kTokens(text));
      }),
      { numRuns: 300 },
    );
  });

  it("is read from bytes that do not start on a four-byte boundary, as from a buffer of its own", () => {
    const shifted = new Uint8Array(written.length + 1);
    shifted.set(written, 1);
    const fromShifted = byteLevelBpeCounter(() => rankTableFromBytes(shifted.subarray(1)), O200K_TOKEN_SPLIT_REGEX);
    expect(fromShifted("The vocabulary is read once → then counted.")).toBe(o200kTokens("The vocabulary is read once → then counted."));
  });
});

describe("a rank table's bytes", () => {
  const small = rankTableBytes(buildRankTable([[0x61], [0x62], "ab", "abc", undefined, "é"]));

  it("hold the same table again, for a small vocabulary with a gap in its ranks", () => {
    const counter = byteLevelBpeCounter(() => rankTableFromBytes(small), /[a-zé]+/gu);
    const original = byteLevelBpeCounter(() => buildRankTable([[0x61], [0x62], "ab", "abc", undefined, "é"]), /[a-zé]+/gu);
    for (const text of ["ab", "abab", "abc", "aab", "é"]) expect(counter(text)).toBe(original(text));
  });

  it("are refused, saying why, when cut short, lengthened, or not a table at all", () => {
    expect(() => rankTableFromBytes(small.subarray(0, 8))).toThrow(/16-byte header; these are 8 bytes/);
    expect(() => rankTableFromBytes(small.subarray(0, small.length - 4))).toThrow(/takes \d+ bytes; these are \d+/);
    const longer = new Uint8Array(small.length + 4);
    longer.set(small);
    expect(() => rankTableFromBytes(longer)).toThrow(/takes \d+ bytes; these are \d+/);
    const notATable = Uint8Array.from(small);
    notATable[0] = 0x7b;
    expect(() => rankTableFromBytes(notATable)).toThrow(/not a rank table/);
    const badSlots = Uint8Array.from(small);
    new DataView(badSlots.buffer).setUint32(12, 3, true);
    expect(() => rankTableFromBytes(badSlots)).toThrow(/power of two/);
  });
});
