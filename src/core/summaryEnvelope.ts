/**
 * The envelope a summary travels in, and how the next compaction recognizes it.
 *
 * The summary goes back to the model as a user message, because every provider
 * accepts a user message anywhere and a system message is not allowed mid-list
 * by some. Its opening line is fixed and tagged so the next compaction can tell
 * its own output from something the user typed: the previous summary must be
 * updated, never fed back in as conversation, or each compaction summarizes a
 * summary of a summary and the oldest facts blur away.
 */
import type { Message } from "./message.js";

/** The opening line of every summary message; recognition keys on it exactly. */
export const SUMMARY_PREAMBLE =
  "[compactd] The earlier part of this conversation was compacted. This summary replaces it:";

const OPEN_TAG = "<summary>";
const CLOSE_TAG = "</summary>";

/** Wraps summary text in the envelope the model sees. */
function summaryText(summary: string): string {
  return `${SUMMARY_PREAMBLE}\n\n${OPEN_TAG}\n${summary}\n${CLOSE_TAG}`;
}

/**
 * Opening and closing tags of the blocks appended after a summary's prose
 * (the pinned requests, the file lists; see pinnedRequests.ts and
 * fileOperations.ts). The next compaction finds each block by its tags.
 */
const BLOCK_TAG = /<(\/?)(user-requests|request|read-files|modified-files)\b/g;

/**
 * `text` with the blocks' tags defused (`<read-files` becomes `< read-files`):
 * for everything placed in a summary that compactd did not write itself, the
 * user's requests, the paths, and the summarizer's prose, which quotes the
 * session. A block quoted from a tool's output (a compacted session saved
 * earlier, say) would otherwise be read back as the summary's own, its
 * requests pinned as the user's and its paths listed as modified, while the
 * real blocks sank into the prose. The text stays readable; idempotent.
 */
export function defuseBlockTags(text: string): string {
  return text.replace(BLOCK_TAG, "<$1 $2");
}

/**
 * The summary message in the plain shape both providers accept: a user message
 * with string content. It is the only message a compaction creates.
 */
export interface SummaryMessage {
  readonly role: "user";
  readonly content: string;
}

export function summaryMessage(summary: string): SummaryMessage {
  return { role: "user", content: summaryText(summary) };
}

/**
 * The summary text inside a message built by {@link summaryMessage}, or
 * undefined when the message is anything else.
 */
export function previousSummaryOf(message: Message): string | undefined {
  if (message.kind !== "user" || message.blocks.length !== 1) return undefined;
  const block = message.blocks[0]!;
  if (block.type !== "text") return undefined;
  const text = block.text;
  if (!text.startsWith(SUMMARY_PREAMBLE)) return undefined;
  const open = text.indexOf(OPEN_TAG, SUMMARY_PREAMBLE.length);
  const close = text.lastIndexOf(CLOSE_TAG);
  if (open < 0 || close < open) return undefined;
  return text.slice(open + OPEN_TAG.length, close).replace(/^\n/, "").replace(/\n$/, "");
}
