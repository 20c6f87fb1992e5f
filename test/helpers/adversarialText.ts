/**
 * Text that is hard on a BPE tokenizer, of the kinds real conversations carry:
 * long runs that o200k's pre-tokenizer keeps as one piece (a repeated
 * character, a pasted hex dump, Chinese without spaces, words run together)
 * and high-entropy text whose pieces miss every cache (base64, digits).
 * Built from a seed, so the property tests and the core benchmark use the
 * same texts and a failing case can be rebuilt.
 */
import fc from "fast-check";

export const ADVERSARIAL_KINDS = [
  "repeated character",
  "alternating pair",
  "digits",
  "base64",
  "hex",
  "CJK without spaces",
  "emoji sequence",
  "words without spaces",
  "runs between prose",
] as const;

export type AdversarialKind = (typeof ADVERSARIAL_KINDS)[number];

/** Characters whose runs tokenize very differently: long-token punctuation and spaces, letters, multi-byte letters, astral symbols. */
const RUN_CHARACTERS = ["x", "X", "a", "=", "-", "*", " ", "\n", "/", "é", "中", "😀"] as const;
const EMOJI = ["😀", "👍🏽", "🎉", "❤️", "👨‍👩‍👧", "🏳️‍🌈", "🇩🇪", "🤷‍♀️"] as const;
const WORDS = ["token", "budget", "the", "compaction", "summary", "of", "tool", "result", "stream", "worker"] as const;
const BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const PROSE = "The agent read the file, ran the tests and wrote a short summary of what failed. ";

/** A small seeded generator (mulberry32): the same seed gives the same text. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** Joins `next()` until the text reaches `length` UTF-16 units, then cuts it there without splitting a character. */
function build(length: number, next: () => string): string {
  const parts: string[] = [];
  let size = 0;
  while (size < length) {
    const part = next();
    parts.push(part);
    size += part.length;
  }
  const text = parts.join("");
  const end = /[\ud800-\udbff]/.test(text[length - 1] ?? "") ? length - 1 : length;
  return text.slice(0, end);
}

/** About `length` UTF-16 units of adversarial text of one kind. */
export function adversarialText(kind: AdversarialKind, length: number, seed: number): string {
  const random = seededRandom(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  switch (kind) {
    case "repeated character": {
      const char = pick(RUN_CHARACTERS);
      return build(length, () => char);
    }
    case "alternating pair": {
      const pair = pick(RUN_CHARACTERS) + pick(RUN_CHARACTERS);
      return build(length, () => pair);
    }
    case "digits":
      return build(length, () => String(Math.floor(random() * 10)));
    case "base64":
      return build(length, () => BASE64[Math.floor(random() * 64)]!);
    case "hex":
      return build(length, () => Math.floor(random() * 16).toString(16));
    case "CJK without spaces":
      return build(length, () => String.fromCharCode(0x4e00 + Math.floor(random() * 0x5000)));
    case "emoji sequence":
      return build(length, () => pick(EMOJI));
    case "words without spaces":
      return build(length, () => pick(WORDS));
    case "runs between prose": {
      const runKinds = ADVERSARIAL_KINDS.filter((k) => k !== "runs between prose");
      return build(length, () => PROSE + adversarialText(pick(runKinds), 200 + Math.floor(random() * 1_500), Math.floor(random() * 2 ** 32)));
    }
  }
}

/** Adversarial text of any kind, `minLength` to `maxLength` UTF-16 units long, for property tests. */
export function adversarialTexts(minLength: number, maxLength: number): fc.Arbitrary<string> {
  return fc
    .tuple(fc.constantFrom(...ADVERSARIAL_KINDS), fc.integer({ min: minLength, max: maxLength }), fc.integer())
    .map(([kind, length, seed]) => adversarialText(kind, length, seed));
}
