/**
 * Where the conversation is divided into "summarize this" and "keep this verbatim".
 */
import type { Message } from "./message.js";
import type { TokenEstimator } from "./tokenEstimator.js";

export interface CutPoint {
  /** Index of the first message kept verbatim. Equal to `start` when nothing can be cut. */
  readonly firstKeptIndex: number;
  /** The user message that opened the turn the cut lands in, or -1 when the cut falls on a turn boundary. */
  readonly turnStartIndex: number;
  /**
   * The cut divides a single turn, so the part before it needs its own summary
   * to explain the part after it.
   */
  readonly isSplitTurn: boolean;
  /** Tokens of the kept tail, each counted exactly. */
  readonly keptTokens: number;
}

/**
 * Walks backwards from the newest message accumulating exact token counts, and
 * keeps the largest suffix that still fits `keepRecentTokens`.
 *
 * The budget is a ceiling, not a floor. Stopping at the first message that
 * reaches the budget and keeping that message too is the obvious reading and
 * the wrong one: a single search result is routinely ten thousand tokens on its
 * own, so "keep the recent 20k" would hand back 30k and leave barely a round of
 * headroom before the next compaction.
 *
 * Nothing here consults the current turn. That is deliberate: the budget is the
 * only rule, and a turn large enough to exceed it on its own gets split rather
 * than exempted. The one exception is the newest group (a tool call and its
 * results): if even that is over the budget it is kept anyway, because a tail
 * without the newest call is no conversation the model can continue.
 *
 * Only the messages the walk visits are tokenized, and the one that crosses
 * the budget only until it does; older ones are never looked at, and when
 * byte lengths alone prove that everything fits, nothing is.
 */
export function findCutPoint(
  messages: readonly Message[],
  start: number,
  keepRecentTokens: number,
  estimator: TokenEstimator,
): CutPoint {
  if (fitsWithoutCounting(messages, start, keepRecentTokens, estimator)) return noCut(start);
  const cuttable = cuttableIndexes(messages, start);
  let sum = 0;
  let best = -1;
  let bestSum = 0;
  let i = messages.length - 1;
  for (; i >= start; i--) {
    // The message that crosses the budget is tokenized only until it does.
    sum += estimator.countUpTo(messages[i]!, keepRecentTokens - sum);
    if (sum > keepRecentTokens) break;
    if (cuttable[i - start]) {
      best = i;
      bestSum = sum;
    }
  }
  // Everything from `start` fits: nothing lies outside the budget.
  if (i < start) return noCut(start);
  if (best < 0) {
    const newest = newestGroup(messages, start, cuttable, estimator);
    if (newest === undefined) return noCut(start);
    [best, bestSum] = newest;
  }
  const turnStartIndex = messages[best]!.kind === "user" ? -1 : turnStartBefore(messages, start, best);
  return { firstKeptIndex: best, turnStartIndex, isSplitTurn: turnStartIndex >= 0, keptTokens: bestSum };
}

/**
 * Whether everything from `start` fits by byte-length upper bounds alone: the
 * common "nothing to compact" answer for short conversations, without running
 * the tokenizer at all.
 */
function fitsWithoutCounting(messages: readonly Message[], start: number, budget: number, estimator: TokenEstimator): boolean {
  let bound = 0;
  for (let i = messages.length - 1; i >= start; i--) {
    bound += estimator.upperBound(messages[i]!);
    if (bound > budget) return false;
  }
  return true;
}

/**
 * For each index from `start`, whether the tail may begin there: the message is
 * not a tool result, and no tool call before it is answered at or after it. The
 * second rule matters for inputs where something sits between a call and its
 * result; cutting there would orphan the result and the provider would reject
 * every later request with a 400.
 */
function cuttableIndexes(messages: readonly Message[], start: number): boolean[] {
  // Where each message's calls are last answered. Ids are matched to the
  // earliest unanswered call with that id, because some agents reuse ids.
  const answeredAt = new Array<number>(messages.length - start).fill(-1);
  const unanswered = new Map<string, number[]>();
  for (let i = start; i < messages.length; i++) {
    for (const b of messages[i]!.blocks) {
      if (b.type === "toolCall") {
        const calls = unanswered.get(b.id);
        if (calls === undefined) unanswered.set(b.id, [i]);
        else calls.push(i);
      } else if (b.type === "toolResult") {
        const callIndex = unanswered.get(b.toolCallId)?.shift();
        if (callIndex !== undefined) answeredAt[callIndex - start] = Math.max(answeredAt[callIndex - start]!, i);
      }
    }
  }
  const cuttable = new Array<boolean>(messages.length - start);
  let openUntil = -1; // the latest index at which a call made so far is answered
  for (let i = start; i < messages.length; i++) {
    cuttable[i - start] = messages[i]!.kind !== "toolResult" && openUntil < i;
    openUntil = Math.max(openUntil, answeredAt[i - start]!);
  }
  return cuttable;
}

/**
 * The start of the newest group (the newest message the tail may begin at) and
 * the tokens from there to the end. Counts are cached, so this costs no tokenizing.
 */
function newestGroup(
  messages: readonly Message[],
  start: number,
  cuttable: readonly boolean[],
  estimator: TokenEstimator,
): [number, number] | undefined {
  let sum = 0;
  for (let j = messages.length - 1; j >= start; j--) {
    sum += estimator.count(messages[j]!);
    if (cuttable[j - start]) return [j, sum];
  }
  return undefined;
}

/** The user message that opened the turn containing `index`, or -1 when the turn began before `start`. */
function turnStartBefore(messages: readonly Message[], start: number, index: number): number {
  for (let j = index - 1; j >= start; j--) {
    if (messages[j]!.kind === "user") return j;
  }
  return -1;
}

function noCut(start: number): CutPoint {
  return { firstKeptIndex: start, turnStartIndex: -1, isSplitTurn: false, keptTokens: 0 };
}
