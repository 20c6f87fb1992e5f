/**
 * The first step of a compaction: is there anything to compact, and where
 * does the verbatim tail begin?
 *
 * It is a step of its own because the service asks it on every request, in
 * the API, before a job exists, and most requests end here ("nothing to
 * compact"). Everything else `prepare` decides (the summarizer inputs, file
 * operations, prompt overhead) is the worker's business and would be thrown
 * away by the API. The exact counts the walk makes travel with the job (the
 * estimator's `knownCounts`), so the worker's `prepare`, which builds on this
 * same step, tokenizes none of those messages again.
 */
import { findCutPoint, type CutPoint } from "./cutPoint.js";
import type { Conversation, Message } from "./message.js";
import type { Settings } from "./settings.js";
import { previousSummaryOf, summaryMessage } from "./summaryEnvelope.js";
import type { TokenEstimator } from "./tokenEstimator.js";

/** About what an o200k token of English takes in UTF-8: a range whose bytes exceed the envelope's tokens this many times is larger. */
const BYTES_PER_TOKEN_OF_PROSE = 4;

export interface CutPlan {
  /** Messages before this index are the system prompt and survive every compaction. */
  readonly systemEnd: number;
  /** The first message that can be summarized: after the system prompt and a previous summary. */
  readonly start: number;
  /** The previous compaction's summary text (still carrying its pinned requests and file blocks), when there is one. */
  readonly previousSummary: string | undefined;
  readonly cut: CutPoint;
}

/**
 * Where to cut, or null when compaction cannot help: there is no context
 * window (so no budget to enforce, and no room to give the summarizer), no
 * message falls outside the keep-recent budget, the last compaction already
 * left nothing to remove, or what falls outside is smaller than any summary
 * of it. That null is the guard against the failure mode where every round
 * spends a summarization call on a context it cannot shrink.
 */
export function planCut(conversation: Conversation, s: Settings, estimator: TokenEstimator): CutPlan | null {
  if (!(s.contextWindow > 0)) return null;
  const messages = conversation.messages;
  if (estimator.usageTokens !== undefined) {
    // Budgets are in the provider's tokens: the scale must be known before the walk.
    estimator.calibrate(messages);
    estimator.applyUsage(conversation);
  }
  const systemEnd = leadingSystemMessages(messages);
  const candidate = messages[systemEnd];
  const previousSummary = candidate === undefined ? undefined : previousSummaryOf(candidate);
  const start = previousSummary === undefined ? systemEnd : systemEnd + 1;
  const cut = findCutPoint(messages, start, s.keepRecentTokens, estimator);
  if (cut.firstKeptIndex <= start || !outweighsAnEmptySummary(messages, start, cut.firstKeptIndex, estimator)) return null;
  return { systemEnd, start, previousSummary, cut };
}

/**
 * Whether the messages a compaction would replace could be larger than the
 * summary replacing them. The newest group is kept whatever its size, so a
 * pasted log behind a greeting leaves only the greeting outside the budget,
 * and summarizing it pays a model call to hand back a longer conversation.
 * No summary is smaller than its envelope with nothing inside, so a range no
 * larger than that cannot shrink. Byte lengths bound the range first, and the
 * walk stops as soon as they put it well above the envelope; only a range of
 * a few short messages is counted exactly (and those counts travel with the
 * job like the tail's).
 */
function outweighsAnEmptySummary(messages: readonly Message[], start: number, end: number, estimator: TokenEstimator): boolean {
  const emptySummary = estimator.countRecurringText(summaryMessage("").content);
  let bound = 0;
  for (let i = start; i < end; i++) {
    bound += estimator.upperBound(messages[i]!);
    if (bound > emptySummary * BYTES_PER_TOKEN_OF_PROSE) return true;
  }
  if (bound <= emptySummary) return false;
  let exact = 0;
  for (let i = start; i < end; i++) exact += estimator.count(messages[i]!);
  return exact > emptySummary;
}

/**
 * OpenAI-shape system and developer messages at the head of the list are the
 * system prompt: they are sent on every request and are never summarized.
 */
function leadingSystemMessages(messages: readonly Message[]): number {
  let i = 0;
  while (i < messages.length && messages[i]!.kind === "system") i++;
  return i;
}
