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
import { previousSummaryOf } from "./summaryEnvelope.js";
import type { TokenEstimator } from "./tokenEstimator.js";

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
 * Where to cut, or null when compaction cannot help: no message falls outside
 * the keep-recent budget, or the last compaction already left nothing to
 * remove. That null is the guard against the failure mode where every round
 * spends a summarization call on a context it cannot shrink.
 */
export function planCut(conversation: Conversation, s: Settings, estimator: TokenEstimator): CutPlan | null {
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
  if (cut.firstKeptIndex <= start) return null;
  return { systemEnd, start, previousSummary, cut };
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
