/**
 * Cutting text to a length without cutting a character in half.
 *
 * JavaScript strings are UTF-16: an emoji, a rare CJK ideograph or a
 * mathematical letter is two code units, a surrogate pair. A cut between the
 * two leaves a lone surrogate, which the tokenizer reads as U+FFFD, JSON
 * writes as an escape no model can read back, and some providers reject.
 * Every cut of text the core writes or counts goes through here, so lengths
 * stay in code units (as the budgets are) and a pair is never split.
 */

/** Share of a head-and-tail clip given to the head. */
const HEAD_SHARE = 0.6;

/** Clips `text` to at most `max` characters, saying how much was left out. */
export function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  const head = text.slice(0, codePointBoundary(text, max));
  return `${head} … [${text.length - head.length} more characters]`;
}

/** Keeps the first and the last characters of `text`, at most `max` in all, marking the cut between them. */
export function clipMiddle(text: string, max: number): string {
  if (text.length <= max) return text;
  const headEnd = codePointBoundary(text, Math.round(max * HEAD_SHARE));
  const tailStart = codePointBoundaryAfter(text, text.length - (max - Math.round(max * HEAD_SHARE)));
  return `${text.slice(0, headEnd)} … [${tailStart - headEnd} characters cut] … ${text.slice(tailStart)}`;
}

/** `index`, moved back one when it would split a surrogate pair. */
export function codePointBoundary(text: string, index: number): number {
  return splitsSurrogatePair(text, index) ? index - 1 : index;
}

/** `index`, moved on one when it would split a surrogate pair (where a tail begins, so the tail does not grow). */
function codePointBoundaryAfter(text: string, index: number): number {
  return splitsSurrogatePair(text, index) ? index + 1 : index;
}

function splitsSurrogatePair(text: string, index: number): boolean {
  if (index <= 0 || index >= text.length) return false;
  const before = text.charCodeAt(index - 1);
  const after = text.charCodeAt(index);
  return before >= 0xd800 && before <= 0xdbff && after >= 0xdc00 && after <= 0xdfff;
}
