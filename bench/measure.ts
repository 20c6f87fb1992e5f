/**
 * One row of the core benchmark: speed and accuracy of `prepare` on one
 * conversation and one window, against a full tokenizer pass in the same loop.
 */
import { parseConversation } from "../src/core/formats/parseConversation.js";
import type { Conversation } from "../src/core/message.js";
import { prepare } from "../src/core/prepare.js";
import { normalizeSettings } from "../src/core/settings.js";
import { TokenEstimator } from "../src/core/tokenEstimator.js";
import { conversationText, exactTotal } from "./pricedText.js";
import { findCutPoint } from "../src/core/cutPoint.js";
import { interleavedRuns, median, ratioSpread, type Spread } from "./timing.js";


export interface Timings {
  readonly parseMs: number;
  /** One `countTokens` over the whole priced text. */
  readonly baselineMs: number;
  /** `prepare` with a fresh estimator, the conversation already parsed. */
  readonly prepareMs: number;
  /** prepare / baseline over the rounds of one interleaved loop. */
  readonly ratio: Spread;
}

export interface Accuracy {
  /** The conversation's tokens, every message counted exactly. */
  readonly exactTokens: number;
  /** The keep-recent budget after normalization (smaller windows scale it down). */
  readonly keepBudget: number;
  /** Exact tokens of the kept tail; undefined when prepare found nothing to compact. */
  readonly keptTokens: number | undefined;
  /**
   * The tail is only the newest group (a message, or a call with its results),
   * which the cut point keeps even when it alone is over the budget.
   */
  readonly newestGroupOnly: boolean;
  /** `prepare`'s estimate of the whole conversation; undefined when it found nothing to compact. */
  readonly tokensBefore: number | undefined;
  /** Share of the messages' exact tokens that `prepare` tokenized (the rest it estimated). */
  readonly tokenizedShare: number;
}

export interface Row extends Timings, Accuracy {
  readonly name: string;
  readonly messages: number;
  readonly windowTokens: number;
}

function settingsFor(windowTokens: number) {
  // The default reserve and keep-recent: what a real agent gets.
  return normalizeSettings({ contextWindow: windowTokens });
}

/** The three timed calls of one row. */
export interface Workload {
  readonly parse: () => unknown;
  readonly fullPass: () => unknown;
  readonly prepare: () => unknown;
}

export function workload(input: unknown, conversation: Conversation, windowTokens: number): Workload {
  const settings = settingsFor(windowTokens);
  const text = conversationText(conversation);
  return {
    parse: () => parseConversation(input),
    fullPass: () => new TokenEstimator().countText(text),
    prepare: () => prepare(conversation, settings, new TokenEstimator()),
  };
}

/**
 * Many small conversations as one workload: each call does its part for all of
 * them. Timing them one by one would spend the run on forced collections.
 */
export function batchWorkload(parts: readonly Workload[]): Workload {
  return {
    parse: () => parts.forEach((w) => w.parse()),
    fullPass: () => parts.forEach((w) => w.fullPass()),
    prepare: () => parts.forEach((w) => w.prepare()),
  };
}

export function measureTimings(work: Workload, runs: number): Timings {
  const [parse] = interleavedRuns([work.parse], runs);
  const [baseline, prepared] = interleavedRuns([work.fullPass, work.prepare], runs);
  return {
    parseMs: median(parse!),
    baselineMs: median(baseline!),
    prepareMs: median(prepared!),
    ratio: ratioSpread(prepared!, baseline!),
  };
}

export function measureAccuracy(conversation: Conversation, windowTokens: number): Accuracy {
  const settings = settingsFor(windowTokens);
  const exact = new TokenEstimator();
  const exactTokens = exactTotal(conversation, exact);
  const used = new TokenEstimator();
  const preparation = prepare(conversation, settings, used);
  let messageTokens = 0;
  let tokenized = 0;
  for (const m of conversation.messages) {
    messageTokens += exact.count(m);
    if (used.isCounted(m)) tokenized += exact.count(m);
  }
  const keptTokens =
    preparation === null ? undefined : conversation.messages.slice(preparation.firstKeptIndex).reduce((sum, m) => sum + exact.count(m), 0);
  // With a zero budget the cut point keeps exactly the newest group.
  const newestGroup = findCutPoint(conversation.messages, 0, 0, exact).firstKeptIndex;
  return {
    exactTokens,
    keepBudget: settings.keepRecentTokens,
    keptTokens,
    newestGroupOnly: preparation !== null && preparation.firstKeptIndex === newestGroup,
    tokensBefore: preparation?.tokensBefore,
    tokenizedShare: messageTokens === 0 ? 0 : tokenized / messageTokens,
  };
}

/** One row for a conversation already parsed (and checked) from `input`. */
export function measureParsed(name: string, input: unknown, conversation: Conversation, windowTokens: number, runs: number): Row {
  return {
    name,
    messages: conversation.messages.length,
    windowTokens,
    ...measureTimings(workload(input, conversation, windowTokens), runs),
    ...measureAccuracy(conversation, windowTokens),
  };
}

export function measureRow(name: string, input: unknown, windowTokens: number, runs: number): Row {
  return measureParsed(name, input, parseConversation(input), windowTokens, runs);
}

/** Exact tokens of a tail given as compactd input (pi's kept tail). */
export function exactTokensOf(input: unknown): number {
  return exactTotal(parseConversation(input), new TokenEstimator());
}
