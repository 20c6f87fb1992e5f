import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { clip, clipMiddle } from "../../src/core/clipText.js";

/** A UTF-16 surrogate without its partner: what a cut through a character leaves, and what no model or JSON reader should be sent. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Text where characters outside the Basic Multilingual Plane (emoji, rare CJK) are common, so cuts land inside them. */
const astralHeavyText = fc.array(fc.oneof(fc.constantFrom("😀", "𝒳", "𠀋", "a", " ", "é"), fc.string({ unit: "grapheme", maxLength: 4 })), { maxLength: 120 }).map((parts) => parts.join(""));

describe("clipping text", () => {
  it("never splits a character outside the Basic Multilingual Plane, at the head or the tail", () => {
    fc.assert(
      fc.property(astralHeavyText, fc.integer({ min: 0, max: 200 }), (text, max) => {
        for (const clipped of [clip(text, max), clipMiddle(text, max)]) {
          expect(clipped).not.toMatch(LONE_SURROGATE);
        }
      }),
    );
  });

  it("keeps a head of the text and, in the middle cut, a tail of it, no longer than asked", () => {
    fc.assert(
      fc.property(astralHeavyText, fc.integer({ min: 0, max: 200 }), (text, max) => {
        const middle = clipMiddle(text, max);
        if (text.length <= max) {
          expect(middle).toBe(text);
          expect(clip(text, max)).toBe(text);
          return;
        }
        const [head, tail] = middle.split(/ … \[\d+ characters cut\] … /);
        expect(text.startsWith(head!)).toBe(true);
        expect(text.endsWith(tail!)).toBe(true);
        expect(head!.length + tail!.length).toBeLessThanOrEqual(max);
        expect(middle).toContain(`[${text.length - head!.length - tail!.length} characters cut]`);
        const [kept] = clip(text, max).split(/ … \[\d+ more characters\]$/);
        expect(text.startsWith(kept!)).toBe(true);
        expect(kept!.length).toBeLessThanOrEqual(max);
      }),
    );
  });
});
