import { describe, expect, it } from "vitest";
import { wellFormed } from "../../src/core/wellFormedText.js";

describe("wellFormed", () => {
  it("replaces a lone high surrogate, a lone low surrogate and a pair in the wrong order with U+FFFD, one for one", () => {
    expect(wellFormed("a\ud800b")).toBe("a\ufffdb");
    expect(wellFormed("a\udc00b")).toBe("a\ufffdb");
    expect(wellFormed("\udc00\ud800")).toBe("\ufffd\ufffd");
    expect(wellFormed("end\ud83d")).toBe("end\ufffd");
  });

  it("keeps surrogate pairs and every other character as they are", () => {
    const text = "emoji \ud83d\ude00, 漢字, \u00e9, \ufffd, \u0000";
    expect(wellFormed(text)).toBe(text);
    expect(wellFormed("\ud800\ud83d\ude00")).toBe("\ufffd\ud83d\ude00");
  });
});
