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

/** A high surrogate with no low one after it, or a low surrogate with no high one before it. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * `text` with every lone surrogate replaced by U+FFFD, the replacement
 * character, which is what a UTF-8 decoder shows for the same broken bytes.
 * One code unit for one, so lengths and offsets stay as they were.
 */
export function wellFormed(text: string): string {
  return text.replace(LONE_SURROGATE, "\uFFFD");
}
