/**
 * The user's own requests, carried verbatim after every summary.
 *
 * The user's words are the one thing an agent must never lose, and a model's
 * summary paraphrases them: a constraint softened by one compaction is gone by
 * the third. So, like the file blocks, the requests are carried mechanically:
 * collected from the summarized messages, merged with the ones the previous
 * summary carried, and appended after the summary in a tagged block, within a
 * bounded share of the summary budget. When they do not all fit, the first
 * request (the task) and the newest ones (the current direction) are kept and
 * the number of the others is stated. A long request the summary already
 * quotes word for word is not printed twice: the block points at the quote and
 * the next compaction reads it back from there.
 */
import { clipMiddle } from "./serialize.js";
import type { Message } from "./message.js";
import { defuseBlockTags, previousSummaryOf } from "./summaryEnvelope.js";

/** The block's share of the summary budget. */
const SUMMARY_BUDGET_SHARE = 1 / 4;

/** The block never takes more than this, however large the summary budget. */
const MAX_BLOCK_TOKENS = 1_000;

/** A request at least this long that the summary quotes verbatim is pointed at instead of repeated. */
const MIN_QUOTED_CHARS = 200;

/** Characters of a quoted request's opening kept in the block to find the quote again. */
const QUOTE_KEY_CHARS = 80;

/** A request alone larger than the block is clipped to head and tail at this many characters per token. */
const CHARS_PER_TOKEN_FLOOR = 3;

const OPEN = "<user-requests";
const CLOSE = "</user-requests>";
const BLOCK = /\n*<user-requests(?: omitted="(\d+)")?>\n([\s\S]*?)\n?<\/user-requests>/;
const ENTRY = /<request(?: quoted="(\d+)")?>\n([\s\S]*?)\n<\/request>/g;

export interface UserRequest {
  readonly text: string;
  /**
   * Index of the message it came from, when that message is in the range
   * being summarized (not inherited). The index, not the message: a
   * compaction holds its requests while it waits on the summarizer, and the
   * conversation is not held then.
   */
  readonly messageIndex: number | undefined;
}

/** Requests a previous summary carried, oldest first, and how many it had already left out. */
export interface PinnedRequests {
  readonly requests: readonly UserRequest[];
  readonly omitted: number;
}

export const NO_PINNED_REQUESTS: PinnedRequests = { requests: [], omitted: 0 };

/**
 * The user's requests among `messages`: the text of user messages (not tool
 * results, not a compaction summary). A message that is nothing but markup
 * elements (`<task-notification>…`, `<local-command-stdout>…`) was written
 * by the agent's harness, not typed by the user, and is left out.
 */
export function userRequestsOf(messages: readonly Message[]): UserRequest[] {
  const requests: UserRequest[] = [];
  for (const message of messages) {
    if (message.kind !== "user" || previousSummaryOf(message) !== undefined) continue;
    const text = message.blocks
      .flatMap((b) => (b.type === "text" ? [b.text] : []))
      .join("\n")
      .trim();
    if (text === "" || isMarkupOnly(text)) continue;
    requests.push({ text, messageIndex: message.index });
  }
  return requests;
}

function isMarkupOnly(text: string): boolean {
  return /^</.test(text) && text.replace(/<([\w-]+)(?:\s[^>]*)?>[\s\S]*?<\/\1>/g, "").trim() === "";
}

/**
 * Splits a summary into its prose and the requests its block carried, reading
 * quoted requests back from the prose.
 */
export function splitPinnedRequests(summary: string): { prose: string; pinned: PinnedRequests } {
  const match = BLOCK.exec(summary);
  if (match === null) return { prose: summary, pinned: NO_PINNED_REQUESTS };
  const prose = (summary.slice(0, match.index) + summary.slice(match.index + match[0].length)).trimEnd();
  const requests: UserRequest[] = [];
  for (const entry of match[2]!.matchAll(ENTRY)) {
    const text = entry[2]!;
    const quotedLength = entry[1] === undefined ? undefined : Number(entry[1]);
    const at = quotedLength === undefined ? -1 : prose.indexOf(text);
    requests.push({ text: at < 0 ? text : prose.slice(at, at + quotedLength!), messageIndex: undefined });
  }
  return { prose, pinned: { requests, omitted: Number(match[1] ?? 0) } };
}

/** The pinned block and which of the range's request messages it carries (their indices). */
export interface PinnedBlock {
  readonly text: string;
  readonly carried: ReadonlySet<number>;
}

/**
 * The block appended after `prose`: the inherited requests then `fresh` ones,
 * the first and the newest kept within the budget share.
 */
export function pinRequests(
  inherited: PinnedRequests,
  fresh: readonly UserRequest[],
  prose: string,
  summaryBudgetTokens: number,
  /**
   * Exact tokens of a text. Pass one memoized counter per job, since the
   * checkpoint pins the same requests again; it can price a request that is
   * its message's whole text by the message's count instead of tokenizing it.
   */
  countText: (text: string) => number,
): PinnedBlock {
  const all = [...inherited.requests, ...fresh];
  if (all.length === 0) return { text: "", carried: new Set() };
  const budget = Math.min(Math.floor(summaryBudgetTokens * SUMMARY_BUDGET_SHARE), MAX_BLOCK_TOKENS);
  let first = entryOf(all[0]!, prose, budget * CHARS_PER_TOKEN_FLOOR);
  let used = entryCost(first, all[0]!, countText);
  if (used > budget) {
    // Denser than the floor assumed (code, non-Latin script): clip once more, in proportion.
    first = entryOf(all[0]!, prose, Math.floor((first.length * budget * 0.9) / used));
    used = entryCost(first, all[0]!, countText);
  }

  // The first request is the task: kept first, clipped to the budget if it is
  // all there is room for. Then the newest, back to the first that does not
  // fit: only those are written and counted, so a session of thousands of
  // short requests costs what the block holds, not what the session asked.
  const kept = new Map<number, string>([[0, first]]);
  for (let i = all.length - 1; i > 0; i--) {
    const entry = entryOf(all[i]!, prose, budget * CHARS_PER_TOKEN_FLOOR);
    const cost = entryCost(entry, all[i]!, countText);
    if (used + cost > budget) break;
    kept.set(i, entry);
    used += cost;
  }
  const omitted = inherited.omitted + all.length - kept.size;
  const lines = [`${OPEN}${omitted > 0 ? ` omitted="${omitted}"` : ""}>`];
  if (omitted > 0) lines.push(`(${omitted} earlier requests between the first and these are left out)`);
  const carried = new Set<number>();
  for (const i of [...kept.keys()].sort((a, b) => a - b)) {
    lines.push(kept.get(i)!);
    const { messageIndex } = all[i]!;
    if (messageIndex !== undefined) carried.add(messageIndex);
  }
  lines.push(CLOSE);
  return { text: lines.join("\n"), carried };
}

/** Tokens of the tags around a verbatim entry. */
const ENTRY_TAG_TOKENS = 8;

/** An entry's tokens: a verbatim request is priced by its text (which a counter may know as its message's count), anything else counted as it is. */
function entryCost(entry: string, request: UserRequest, countText: (text: string) => number): number {
  return entry === verbatimEntry(request.text) ? countText(request.text) + ENTRY_TAG_TOKENS : countText(entry) + 1;
}

function verbatimEntry(text: string): string {
  return `<request>\n${text}\n</request>`;
}

/** One request as an entry: verbatim, or a pointer to the summary's verbatim quote of it. */
function entryOf(request: UserRequest, prose: string, maxChars: number): string {
  const text = defuseBlockTags(request.text);
  if (text.length >= MIN_QUOTED_CHARS && prose.includes(text)) {
    return `<request quoted="${text.length}">\n${text.slice(0, QUOTE_KEY_CHARS)}\n</request>`;
  }
  return verbatimEntry(clipMiddle(text, maxChars));
}
