/**
 * Everything the summarization step needs, computed before any LLM call so
 * the caller can decide not to make one.
 */
import { planCut } from "./cutPlan.js";
import { collectFileOperations, NO_FILE_OPERATIONS, splitFileOperations, type FileOperations } from "./fileOperations.js";
import { fitSummarizerInput, type FittedInput, type LeaveOut } from "./fitSummarizerInput.js";
import type { Conversation, Message } from "./message.js";
import { NO_PINNED_REQUESTS, splitPinnedRequests, type PinnedRequests } from "./pinnedRequests.js";
import { summarizationPromptOverhead } from "./prompts.js";
import { summarizerInputBudget, summaryBudget, turnPrefixBudget, type Settings } from "./settings.js";
import type { SummaryKind } from "./summarizer.js";
import type { TokenEstimator } from "./tokenEstimator.js";
import { typedTextOf } from "./typedText.js";

export interface Preparation {
  /** Where the verbatim tail begins. */
  readonly firstKeptIndex: number;
  /** The complete turns being replaced by prose. */
  readonly messagesToSummarize: readonly Message[];
  /**
   * The discarded head of a split turn, summarized separately so the retained
   * tail still has its originating request.
   */
  readonly turnPrefixMessages: readonly Message[];
  readonly isSplitTurn: boolean;
  /** The prior compaction's prose, updated in place rather than summarized again. */
  readonly previousSummary: string | undefined;
  /** The user requests the prior compaction carried, merged into this one's. */
  readonly inheritedRequests: PinnedRequests;
  readonly tokensBefore: number;
  /**
   * Messages of each range left out because one summarization request could
   * not carry them: the oldest, or those right after the range's opening
   * request (see fitSummarizerInput). Their file paths are still recorded.
   */
  readonly omittedHistory: number;
  readonly omittedTurnPrefix: number;

  /** Messages before this index are the system prompt and survive every compaction. */
  readonly systemEnd: number;
  /** The fitted summarizer input of each range. */
  readonly historyInput: FittedInput;
  readonly turnPrefixInput: FittedInput;
  /** Completion caps of the two summaries. */
  readonly summaryTokens: number;
  readonly turnPrefixTokens: number;
  /** Files read and modified over the full summarized ranges, merged with the previous summary's. */
  readonly fileOperations: FileOperations;
  /**
   * The same over the history alone: what the checkpoint lists. A checkpoint
   * stands for its own turns only; a path the split turn's head touched would
   * be claimed by a turn that never touched it.
   */
  readonly historyFileOperations: FileOperations;
  /** Exact tokens of the system prompt plus the kept tail. */
  readonly keptTokens: number;
  /** The stored turn a checkpoint would cover through, or undefined when the cut is not on a turn boundary. */
  readonly checkpointTurnId: string | undefined;
}

/**
 * Plans the cut (see cutPlan.ts) and collects the message ranges around it.
 *
 * Returns null when compaction cannot help (the cut plan's null).
 */
export function prepare(
  conversation: Conversation,
  s: Settings,
  estimator: TokenEstimator,
  /** The caller's extra focus for the summary; its length counts against the summarizer input. */
  instructions?: string,
): Preparation | null {
  const plan = planCut(conversation, s, estimator);
  if (plan === null) return null;
  const messages = conversation.messages;
  const { systemEnd, start, cut } = plan;
  let previousSummary: string | undefined;
  let inheritedFiles = NO_FILE_OPERATIONS;
  let inheritedRequests = NO_PINNED_REQUESTS;
  if (plan.previousSummary !== undefined) {
    const split = splitFileOperations(plan.previousSummary);
    const pinned = splitPinnedRequests(split.prose);
    previousSummary = pinned.prose;
    inheritedFiles = split.files;
    inheritedRequests = pinned.pinned;
  }
  // The tail is counted exactly; what is left to price by estimate is the head.
  estimator.calibrate(messages.slice(systemEnd, cut.firstKeptIndex));

  const historyEnd = cut.isSplitTurn ? cut.turnStartIndex : cut.firstKeptIndex;
  const messagesToSummarize = messages.slice(start, historyEnd);
  const turnPrefixMessages = cut.isSplitTurn ? messages.slice(cut.turnStartIndex, cut.firstKeptIndex) : [];

  const summaryTokens = summaryBudget(s);
  const turnPrefixTokens = turnPrefixBudget(s);
  const previousSummaryTokens = previousSummary === undefined ? 0 : estimator.countText(previousSummary);
  const historyLeaveOut = leaveOutFor(messagesToSummarize);
  const historyInput = fitSummarizerInput(
    messagesToSummarize,
    summarizerInputBudget(
      s,
      summaryTokens,
      promptOverhead("history", previousSummary, messagesToSummarize.length, historyLeaveOut, instructions, estimator),
      previousSummaryTokens,
    ),
    estimator,
    historyLeaveOut,
  );
  const turnPrefixLeaveOut = leaveOutFor(turnPrefixMessages);
  const turnPrefixInput = fitSummarizerInput(
    turnPrefixMessages,
    summarizerInputBudget(s, turnPrefixTokens, promptOverhead("turnPrefix", undefined, turnPrefixMessages.length, turnPrefixLeaveOut, instructions, estimator), 0),
    estimator,
    turnPrefixLeaveOut,
  );

  const topSystemTokens = estimator.systemTokens(conversation);
  // Counted exactly, and before the total is priced: system messages are kept
  // verbatim (they are in keptTokens anyway) and need not read like the head
  // whose sample prices the rest, so an estimate of them could be far off.
  const systemMessageTokens = exactSum(messages.slice(0, systemEnd), estimator);
  const historyFileOperations = collectFileOperations(messagesToSummarize, inheritedFiles);
  return {
    firstKeptIndex: cut.firstKeptIndex,
    messagesToSummarize,
    turnPrefixMessages,
    isSplitTurn: cut.isSplitTurn,
    previousSummary,
    inheritedRequests,
    tokensBefore: estimator.usageTokens ?? Math.round(topSystemTokens + estimator.sumEstimates(messages)),
    omittedHistory: historyInput.omitted,
    omittedTurnPrefix: turnPrefixInput.omitted,
    systemEnd,
    historyInput,
    turnPrefixInput,
    summaryTokens,
    turnPrefixTokens,
    fileOperations: collectFileOperations(turnPrefixMessages, historyFileOperations),
    historyFileOperations,
    keptTokens: topSystemTokens + systemMessageTokens + cut.keptTokens,
    checkpointTurnId: checkpointTurnId(messages, start, historyEnd),
  };
}

function exactSum(messages: readonly Message[], estimator: TokenEstimator): number {
  let sum = 0;
  for (const m of messages) sum += estimator.count(m);
  return sum;
}

/**
 * A summary is a checkpoint only when the summarized history ends exactly on a
 * stored turn: its last message carries a turn id and the next message belongs
 * to another turn. Persisted onto that turn, it lets the next request load the
 * summary instead of everything up to and including the turn. A history that
 * ends inside a turn would make the caller drop half a turn it still needs.
 */
function checkpointTurnId(messages: readonly Message[], start: number, historyEnd: number): string | undefined {
  if (historyEnd <= start) return undefined;
  const last = messages[historyEnd - 1]!.turnId;
  if (last === undefined) return undefined;
  const next = messages[historyEnd]?.turnId;
  return next !== last ? last : undefined;
}

/**
 * Which messages to leave out of a range that does not fit: those after its
 * opening when it opens with what the user typed (the request the rest
 * answers), else the oldest.
 */
function leaveOutFor(range: readonly Message[]): LeaveOut {
  const opening = range[0];
  return opening !== undefined && opening.kind === "user" && typedTextOf(opening) !== "" ? "afterOpening" : "oldest";
}

/**
 * Tokens of a summarization prompt's fixed text: everything but the transcript
 * and the previous summary, with the omission note priced at its largest
 * (either wording, since a range asked to keep its opening falls back to
 * leaving out the oldest when the opening alone does not fit).
 */
function promptOverhead(
  kind: SummaryKind,
  previousSummary: string | undefined,
  rangeLength: number,
  leaveOut: LeaveOut,
  instructions: string | undefined,
  estimator: TokenEstimator,
): number {
  const ways: readonly LeaveOut[] = leaveOut === "afterOpening" ? ["afterOpening", "oldest"] : ["oldest"];
  return Math.max(
    ...ways.map((leftOut) => {
      const { system, prompt } = summarizationPromptOverhead({ kind, previousSummary, omitted: rangeLength, leftOut, instructions });
      return estimator.countRecurringText(system) + estimator.countRecurringText(prompt);
    }),
  );
}
