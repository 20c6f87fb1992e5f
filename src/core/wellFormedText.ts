/**
 * Text compactd writes, made valid Unicode.
 *
 * A conversation can hold lone UTF-16 surrogates: `"\ud800"` is valid JSON,
 * and a tool that decodes broken bytes (a binary file read as text, output cut
 * inside a character) produces them. Such text has no UTF-8 encoding. The
 * Anthropic API refuses a request body that holds one with a 400 ("no low
 * surrogate in string"), the same way on every retry, so one broken byte in a
 * tool result would degrade every compaction of the session; and a summary
 * that carried one would choke a strict JSON reader. What compactd writes from
 * the conversation (the summarization prompt, the summary) goes through here;
 * the kept messages are the agent's own and go back as they came.
 */

/**
 * A surrogate that is not half of a pair: with the `u` flag a pair is read as
 * the one code point it encodes, so only lone halves are of category Cs.
 */
const LONE_SURROGATE = /\p{Cs}/gu;

/** Whether `text` holds a lone surrogate, so has no UTF-8 encoding. */
export function hasLoneSurrogate(text: string): boolean {
  return text.search(LONE_SURROGATE) >= 0;
}

/**
 * `text` with every lone surrogate replaced by U+FFFD, the replacement
 * character, which is what a UTF-8 decoder shows for the same broken bytes.
 * One code unit for one, so lengths and offsets stay as they were.
 */
export function wellFormed(text: string): string {
  return text.replace(LONE_SURROGATE, "\uFFFD");
}
