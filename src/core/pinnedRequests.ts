/**
 * The user's own requests, carried verbatim after every summary.
 *
 * The user's words are the one thing an agent must never lose, and a model's
 * summary paraphrases them: a constraint softened by one compaction is gone by
 * the third. So, like the file blocks, the requests are carried mechanically:
 * collected from the summarized messages, merged with the ones the previous
 * summary carried, and appended after the summary in a tagged block, within a
 * bounded share of the summary budget. A request made again ("continue") is
 * carried once. When they do not all fit, the first request (the task) and the
 * newest ones (the current direction) are kept and the number of the others is
 * stated. A long request the summary already quotes word for word is not
 * printed twice: the block points at the quote and the next compaction reads
 * it back from there.
 */
import { createHash } from "node:crypto";
import { clipMiddle, codePointBoundary } from "./clipText.js";
import type { Message } from "./message.js";
import { defuseBlockTags, previousSummaryOf } from "./summaryEnvelope.js";
import { typedTextOf } from "./typedText.js";

/** The block's share of the summary budget. */
const SUMMARY_BUDGET_SHARE = 1 / 4;

/** The block never takes more than this, however large the summary budget. */
const MAX_BLOCK_TOKENS = 1_000;

/** A request at least this long that the summary quotes verbatim is pointed at instead of repeated. */
const MIN_QUOTED_CHARS = 200;

/** Characters of a quoted request's opening kept in the block to find the quote again. */
const QUOTE_KEY_CHARS = 80;

/**
 * Hex digits of a quoted request's SHA-256 kept beside its opening. Two
 * requests can share their opening (one template, different constraints at
 * the end); the opening alone finds the first quote for both, and one request
 * silently becomes the other. The digest tells the right quote apart.
 */
const QUOTE_DIGEST_HEX = 8;

/** A request alone larger than the block is clipped to head and tail at this many characters per token. */
const CHARS_PER_TOKEN_FLOOR = 3;

/** A clip denser than the floor is redone in proportion, aiming this far under the room (the cut's marker and tags cost too). */
const REFIT_SHARE = 0.9;
/** Refits are bounded: each one counts a clip, and two nearly always land within the room. */
const MAX_REFITS = 3;

const OPEN = "<user-requests";
const CLOSE = "</user-requests>";
const BLOCK = /\n*<user-requests(?: omitted="(\d+)")?>\n([\s\S]*?)\n?<\/user-requests>/;
const ENTRY = /<request(?: quoted="(\d+)"(?: digest="([0-9a-f]+)")?)?>\n([\s\S]*?)\n<\/request>/g;

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
 * The user's requests among `messages`: what the user typed (see typedText.ts:
 * not tool output, not harness markup), in any message but a compaction
 * summary.
 */
export function userRequestsOf(messages: readonly Message[]): UserRequest[] {
  const requests: UserRequest[] = [];
  for (const message of messages) {
    if (previousSummaryOf(message) !== undefined) continue;
    const text = typedTextOf(message);
    if (text !== "") requests.push({ text, messageIndex: message.index });
  }
  return requests;
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
  for (const [, quotedLength, digest, text] of match[2]!.matchAll(ENTRY)) {
    const quote = quotedLength === undefined ? undefined : quoteIn(prose, text!, Number(quotedLength), digest);
    requests.push({ text: quote ?? text!, messageIndex: undefined });
  }
  return { prose, pinned: { requests, omitted: Number(match[1] ?? 0) } };
}

/**
 * The quote in `prose` that opens with `key` and is `length` long: the one
 * whose digest is `digest`, or, for a pointer written before digests were
 * (summaries stored by earlier versions), the first. Undefined when none is.
 */
function quoteIn(prose: string, key: string, length: number, digest: string | undefined): string | undefined {
  for (let at = prose.indexOf(key); at >= 0; at = prose.indexOf(key, at + 1)) {
    const quote = prose.slice(at, at + length);
    if (digest === undefined || quoteDigest(quote) === digest) return quote;
  }
  return undefined;
}

function quoteDigest(text: string): string {
  return createHash("sha256").update(text).digest("hex").slice(0, QUOTE_DIGEST_HEX);
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
  const everyRequest = [...inherited.requests, ...fresh];
  const all = lastOccurrences(everyRequest);
  if (all.length === 0) return { text: "", carried: new Set() };
  const budget = Math.min(Math.floor(summaryBudgetTokens * SUMMARY_BUDGET_SHARE), MAX_BLOCK_TOKENS);
  const last = all.length - 1;
  // The frame and, when requests may be left out, the note saying how many
  // are priced up front, so the block as written stays within its share.
  const mostOmitted = inherited.omitted + Math.max(all.length - 2, 0);
  const noteTokens = mostOmitted === 0 ? 0 : countText(headerLines(mostOmitted).join("\n")) - countText(headerLines(0)[0]!);
  const notePending = inherited.omitted === 0 ? noteTokens : 0;
  let used = countText(`${headerLines(0)[0]!}\n${CLOSE}`) + (inherited.omitted > 0 ? noteTokens : 0);

  // The first request is the task, the newest the current direction: both are
  // always written, clipped to their head and tail when too large. The first
  // gets at most half the block, so a pasted spec cannot crowd out the newest,
  // which gets what is left.
  const first = fittedEntry(all[0]!, prose, last === 0 ? budget - used : Math.floor(budget / 2), countText);
  used += first.cost;
  const kept = new Map<number, string>([[0, first.entry]]);
  if (last > 0) {
    const newest = fittedEntry(all[last]!, prose, budget - used - (last > 1 ? notePending : 0), countText);
    used += newest.cost;
    kept.set(last, newest.entry);
  }
  // Then the ones before the newest, back to the first that does not fit:
  // only those are written and counted, so a session of thousands of short
  // requests costs what the block holds, not what the session asked. While
  // older ones remain, room for the note is held back in case they do not fit.
  for (let i = last - 1; i > 0; i--) {
    const entry = entryOf(all[i]!, prose, budget * CHARS_PER_TOKEN_FLOOR);
    const cost = entryCost(entry, all[i]!, countText);
    if (used + cost + (i > 1 ? notePending : 0) > budget) break;
    kept.set(i, entry);
    used += cost;
  }
  const omitted = inherited.omitted + all.length - kept.size;
  const lines = headerLines(omitted);
  const keptWords = new Set<string>();
  for (const i of [...kept.keys()].sort((a, b) => a - b)) {
    lines.push(kept.get(i)!);
    keptWords.add(wordsOf(all[i]!));
  }
  lines.push(CLOSE);
  // A repeat of a kept request is carried by it: its words are in the block.
  const carried = new Set<number>();
  for (const request of everyRequest) {
    if (request.messageIndex !== undefined && keptWords.has(wordsOf(request))) carried.add(request.messageIndex);
  }
  return { text: lines.join("\n"), carried };
}

/**
 * Each request once, where it was last made. "continue" said thirty times, or
 * an instruction resent, is one request; pinned thirty times it would crowd
 * out the others, and its last occurrence is where it stands in the session.
 */
function lastOccurrences(requests: readonly UserRequest[]): UserRequest[] {
  const lastAt = new Map<string, number>();
  requests.forEach((request, i) => lastAt.set(wordsOf(request), i));
  return requests.filter((request, i) => lastAt.get(wordsOf(request)) === i);
}

/** A request's words as the block writes them (block tags defused), so an inherited copy matches a fresh one. */
function wordsOf(request: UserRequest): string {
  return defuseBlockTags(request.text);
}

/** The block's opening tag and, when requests are left out, the note saying how many. */
function headerLines(omitted: number): string[] {
  if (omitted === 0) return [`${OPEN}>`];
  return [`${OPEN} omitted="${omitted}">`, `(${omitted} earlier requests between the first and these are left out)`];
}

/**
 * One request as an entry within `roomTokens`: clipped at the floor's
 * characters per token, then again in proportion while it is denser than the
 * floor assumed (code, non-Latin script). A pointer to a quote is not clipped.
 */
function fittedEntry(request: UserRequest, prose: string, roomTokens: number, countText: (text: string) => number): { entry: string; cost: number } {
  let maxChars = Math.max(roomTokens, 0) * CHARS_PER_TOKEN_FLOOR;
  let entry = entryOf(request, prose, maxChars);
  let cost = entryCost(entry, request, countText);
  for (let tries = 0; cost > roomTokens && maxChars > 0 && tries < MAX_REFITS; tries++) {
    maxChars = Math.floor((Math.min(maxChars, request.text.length) * roomTokens * REFIT_SHARE) / cost);
    entry = entryOf(request, prose, maxChars);
    cost = entryCost(entry, request, countText);
  }
  return { entry, cost };
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
  const text = wordsOf(request);
  if (text.length >= MIN_QUOTED_CHARS && prose.includes(text)) {
    return `<request quoted="${text.length}" digest="${quoteDigest(text)}">\n${text.slice(0, codePointBoundary(text, QUOTE_KEY_CHARS))}\n</request>`;
  }
  return verbatimEntry(clipMiddle(text, maxChars));
}
