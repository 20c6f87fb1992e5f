/**
 * Summarizes conversation history into a checkpoint: the one stateful piece of
 * the core, holding settings and a summarizer and calling the pure steps.
 */
import { apply, keptMessages, type KeptMessages } from "./apply.js";
import { causeOfError, degradedReasonOf, failsAgainForSameRequest, type Degradation, type DegradationCause } from "./degradation.js";
import { isContextAboveThreshold } from "./contextAboveThreshold.js";
import { CompactionDisabledError, NothingToCompactError } from "./errors.js";
import { formatFileOperations } from "./fileOperations.js";
import type { FittedInput } from "./fitSummarizerInput.js";
import type { Conversation, Message } from "./message.js";
import { buildOfflineSummary, OFFLINE_SUMMARY_TOKENS } from "./offlineSummary.js";
import { choosePathRoot, pathRootLine, statedPathRoot } from "./pathRoot.js";
import { pinRequests, userRequestsOf, type UserRequest } from "./pinnedRequests.js";
import { prepare, type Preparation } from "./prepare.js";
import { buildSummarizationPrompt } from "./prompts.js";
import { providerAnswerOf } from "./rejection.js";
import { isAboveThreshold, normalizeSettings, type Settings, type SettingsInput } from "./settings.js";
import { withStallWatchdog } from "./stallWatchdog.js";
import type { SummarizationResponse, Summarizer, SummarizerCallReport, SummaryKind } from "./summarizer.js";
import { defuseBlockTags, summaryMessage } from "./summaryEnvelope.js";
import { wellFormed } from "./wellFormedText.js";
import { MESSAGE_OVERHEAD_TOKENS, TokenEstimator, type KnownTokenCounts } from "./tokenEstimator.js";

/** What asked for a compaction, for logging, metrics and the UI. */
export type Reason = "threshold" | "overflow" | "manual";

export const REASONS: readonly Reason[] = ["threshold", "overflow", "manual"];

/**
 * A summary that ends exactly on a stored turn. Persisted onto that turn, it
 * lets the next turn load the summary in place of everything up to and
 * including the turn, instead of summarizing the same history again.
 */
export interface Checkpoint {
  /** The stored turn the summary covers through, inclusive. */
  readonly turnId: string;
  readonly summary: string;
  /**
   * The summary is the offline summary because the summarizer failed. It is
   * still a checkpoint: the next compaction folds it in as the previous
   * summary, and refusing it would make a failing summarizer re-run on every turn.
   */
  readonly degraded: boolean;
}

/**
 * The summarizer that needs no model: a structured summary extracted from the
 * messages (see offlineSummary.ts). Choosing it is choosing the compactor's
 * own fallback from the start.
 */
export const OFFLINE_SUMMARIZER = "offline";

/** A summarizer backed by a model, or the offline one. */
export type SummarizerChoice = Summarizer | typeof OFFLINE_SUMMARIZER;

/** What one compaction did. */
export interface Result {
  /**
   * Anthropic's top-level system prompt, unchanged, when the input had one:
   * with it the result has the input's own shape, `{system, messages}`, and
   * whoever writes it back as the session keeps the prompt. (OpenAI system
   * and developer messages lead `messages` instead.)
   */
  readonly system?: unknown;
  /** The list that replaces the input's messages. */
  readonly messages: unknown[];
  readonly summary: string;
  readonly reason: Reason;
  readonly tokensBefore: number;
  readonly tokensAfter: number;
  readonly messagesBefore: number;
  readonly messagesAfter: number;
  /**
   * At least one summary is the offline summary because the chosen summarizer
   * failed. The context still shrank; its memory is just coarser.
   */
  readonly degraded: boolean;
  /**
   * Every failed summarizer call, classified (see degradation.ts): what a
   * caller deciding whether to try again reads. Empty when not degraded.
   */
  readonly degradation: readonly Degradation[];
  /** {@link degradation} in words, so a degraded result is never an opaque one. Null when not degraded. */
  readonly degradedReason: string | null;
  /**
   * Which summarizer wrote the summary: the model-backed summarizer's name
   * (`anthropic`), or `offline` when the offline summarizer wrote any part of
   * it, by choice or as the fallback (then `degraded` is true).
   */
  readonly summarizer: string;
  /** The cut divided a single turn, so a turn-prefix summary was generated alongside the history summary. */
  readonly splitTurn: boolean;
  /** The part of this compaction a later turn can start from, or null when there is none. */
  readonly checkpoint: Checkpoint | null;
  /**
   * Summarized messages that neither a summarization request nor the summary
   * represents: for a model, the messages left out of its request because
   * they did not fit (the oldest, or those right after the request a range
   * opens with, which is kept); for the offline summary, the messages no line of
   * it stands for. A user request carried verbatim after the summary counts
   * as represented.
   */
  readonly omitted: number;
  /** Index, in the input's messages, of the first message kept verbatim. */
  readonly firstKeptIndex: number;
  /**
   * Characters of the previous summary the offline summary left out because
   * the previous summary alone outgrew the summary's cap. The offline summary
   * keeps it whole otherwise (it is the only record of what came before), so
   * this is 0 unless that record was really cut. A model, asked to update the
   * previous summary, decides itself what stays: 0.
   */
  readonly previousSummaryCharsCut: number;
  /**
   * {@link tokensAfter} is still above the threshold of the settings the
   * compaction ran with (window minus reserve; see settings.ts). Compaction
   * terminates because its output is normally far below the threshold; when
   * what it must keep verbatim is too large for that (a single message or
   * tool call in the kept tail larger than the budget, a system prompt, a
   * summary with its pinned requests and file lists in a window barely above
   * the reserve), the context comes out over it. Compacting again gives the
   * same result: the agent must shrink its settings (keep-recent, the
   * summary cap) or its messages, or move to a larger window, instead of
   * asking again at its next turn.
   */
  readonly stillAboveThreshold: boolean;
}

/**
 * A conversation a compaction can read again. Compacting from one
 * ({@link Compactor.compactFrom}), the compactor lets go of the conversation
 * once its summarization prompts are built, and reads it again only when an
 * offline summary must stand in for a failed summarizer call: a worker with
 * hundreds of compactions waiting on the summarizer holds each one's
 * compressed payload, its prompts and its kept messages, not the parsed
 * conversation.
 */
export interface ConversationSource {
  read(): Conversation | Promise<Conversation>;
}

export interface CompactorOptions {
  readonly settings: SettingsInput;
  readonly summarizer: SummarizerChoice | undefined;
}

export interface CompactOptions {
  readonly reason: Reason;
  /** Cancels the compaction; a cancelled summarization is never retried. */
  readonly signal?: AbortSignal;
  /** The provider's token count for the whole input, to scale estimates to its tokenizer. */
  readonly usageTokens?: number;
  /** Extra focus for the summary from the caller ("keep the API keys' names"). */
  readonly instructions?: string;
  /** Exact counts an earlier step of this job made over the same conversation (see TokenEstimator). */
  readonly knownCounts?: KnownTokenCounts;
  /** Hears how each summarizer call ended (for metrics and logs); a call the caller cancelled is not reported. */
  readonly onSummarizerCall?: (call: SummarizerCallReport) => void;
}

/** The stop reason of a request that did not fit the summarizer's window (Anthropic, Bedrock, z.ai). */
const CONTEXT_WINDOW_EXCEEDED = "model_context_window_exceeded";

const MANUAL: CompactOptions = { reason: "manual" };

/** A summarizer call gets this many attempts before the offline summary is used. */
const SUMMARY_ATTEMPTS = 2;

/**
 * Builds a compactor, or returns null when compaction cannot run (no context
 * window, no summarizer), so a caller can treat null as "feature off" without
 * a second flag.
 */
export function createCompactor(options: CompactorOptions): Compactor | null {
  const settings = normalizeSettings(options.settings);
  if (whyCompactionCannotRun(settings, options.summarizer) !== undefined) return null;
  return new Compactor(settings, options.summarizer!);
}

/**
 * Why a compactor with these settings and this summarizer could not run, or
 * undefined when it can. Without a window there is no budget to enforce: every
 * message would be over it, and a compaction would send the summarizer empty
 * transcripts and drop what they stood for.
 */
function whyCompactionCannotRun(settings: Settings, summarizer: SummarizerChoice | undefined): string | undefined {
  if (!(settings.contextWindow > 0)) return "settings.contextWindow must be above 0 (without a window there is no budget to enforce)";
  if (summarizer === undefined) return "a summarizer is required";
  return undefined;
}

interface RangeSummary {
  readonly text: string;
  /** The failed calls that made this range fall back to the offline summary; empty when it did not. */
  readonly failures: readonly Degradation[];
  /** The summarizer's name, or undefined when the previous summary stands unchanged. */
  readonly writer: string | undefined;
  /** Indices of the range's messages neither the request nor the summary represents. */
  readonly unrepresented: readonly number[];
  /** Characters of the previous summary an offline summary left out (see Result.previousSummaryCharsCut). */
  readonly previousSummaryCharsCut: number;
}

export class Compactor {
  /**
   * Throws a TypeError where {@link createCompactor} returns null (no context
   * window, no summarizer): a compactor that exists can run.
   */
  constructor(
    readonly settings: Settings,
    private readonly summarizer: SummarizerChoice,
  ) {
    const cannotRun = whyCompactionCannotRun(settings, summarizer);
    if (cannotRun !== undefined) throw new TypeError(`new Compactor: ${cannotRun}; createCompactor returns null instead`);
  }

  /**
   * Compacts `conversation`. Throws {@link NothingToCompactError} when nothing
   * lies outside the keep-recent budget (no LLM call is made; its
   * `stillAboveThreshold` says whether the context is above the threshold
   * all the same), and {@link CompactionDisabledError} for a threshold compaction while disabled.
   * Summarizer failures do not throw: they produce a degraded result.
   * Without options it is a manual compaction.
   */
  async compact(conversation: Conversation, options: CompactOptions = MANUAL): Promise<Result> {
    return this.compactFrom({ read: () => conversation }, options);
  }

  /**
   * {@link compact}, reading the conversation from `source`: once to plan,
   * and again only if an offline summary must stand in for a failed
   * summarizer call. While the summarizer runs, the compaction holds the
   * prompts and what the result is built from, not the conversation.
   */
  async compactFrom(source: ConversationSource, options: CompactOptions = MANUAL): Promise<Result> {
    // Plain JavaScript callers get no type check; name the option rather than fail on it later.
    if (!REASONS.includes(options.reason)) {
      throw new TypeError(`compact: options.reason must be one of ${REASONS.join(", ")}, got ${JSON.stringify(options.reason)}`);
    }
    if (options.reason === "threshold" && !this.settings.enabled) throw new CompactionDisabledError();
    const estimator = new TokenEstimator({ usageTokens: options.usageTokens, known: options.knownCounts });
    const planned = await this.planFrom(source, options, estimator);
    const { after, historyRequests, freshRequests, countRequest, rootLine } = planned;
    // Read again only by a fallback to the offline summary, once for both ranges.
    let reread: Promise<Conversation> | undefined;
    const rangeMessages = async (range: RangeRequest): Promise<readonly Message[]> =>
      (await (reread ??= Promise.resolve(source.read()))).messages.slice(range.from, range.to);
    const [history, prefix] = await Promise.all([
      planned.history === undefined
        ? // No new complete turns to fold in (the whole summarized range is the head of the current turn): the previous summary stands.
          { text: planned.previousSummary ?? "", failures: [], writer: undefined, unrepresented: [], previousSummaryCharsCut: 0 }
        : this.summarizeRange(planned.history, options, estimator, rangeMessages),
      planned.turnPrefix === undefined ? undefined : this.summarizeRange(planned.turnPrefix, options, estimator, rangeMessages),
    ]);

    const prefixSection = prefix === undefined ? "" : `## Turn in progress (its start was compacted)\n\n${prefix.text}`;
    const ranges = prefix === undefined ? [history] : [history, prefix];
    const prose = statingPathRoot(joinSections([history.text, prefixSection]), rootLine, ranges, planned.previousSummary);
    const pinned = pinRequests(after.inheritedRequests, freshRequests, prose, after.summaryTokens, countRequest);
    const summary = summaryOf([prose, pinned.text, formatFileOperations(after.fileOperations)]);
    const message = summaryMessage(summary);
    const messages = apply(after.kept, message);
    const degradation = ranges.flatMap((r) => r.failures);
    const degraded = degradation.length > 0;
    const writers = ranges.flatMap((r) => (r.writer === undefined ? [] : [r.writer]));
    const tokensAfter = Math.round(after.keptTokens + estimator.countText(message.content) + MESSAGE_OVERHEAD_TOKENS * estimator.scaleFactor);
    return {
      ...(after.system !== undefined && { system: after.system }),
      messages,
      summary,
      reason: options.reason,
      tokensBefore: after.tokensBefore,
      tokensAfter,
      messagesBefore: after.messagesBefore,
      messagesAfter: messages.length,
      degraded,
      degradation,
      degradedReason: degradedReasonOf(degradation),
      summarizer: writers.includes(OFFLINE_SUMMARIZER) ? OFFLINE_SUMMARIZER : this.summarizerName,
      splitTurn: after.isSplitTurn,
      checkpoint:
        after.checkpointTurnId === undefined
          ? null
          : {
              turnId: after.checkpointTurnId,
              summary: summaryOf([
                statingPathRoot(history.text, rootLine, [history], planned.previousSummary),
                pinRequests(after.inheritedRequests, historyRequests, history.text, after.summaryTokens, countRequest).text,
                formatFileOperations(after.historyFileOperations),
              ]),
              degraded: history.failures.length > 0,
            },
      omitted: ranges.flatMap((r) => r.unrepresented).filter((i) => !pinned.carried.has(i)).length,
      firstKeptIndex: after.firstKeptIndex,
      previousSummaryCharsCut: history.previousSummaryCharsCut,
      stillAboveThreshold: isAboveThreshold(this.settings, tokensAfter),
    };
  }

  /**
   * Everything decided before any summarizer call, reduced to what the calls
   * and the result need: the prompts are built here, and the kept messages
   * taken, so the conversation, the transcripts the prompts were made from
   * and the rest of the preparation are garbage while the calls are in
   * flight, which is most of a compaction's life. (The conversation is read
   * in here, not in the caller's frame, so nothing of it outlives this call.)
   * Throws {@link NothingToCompactError} when there is nothing to compact,
   * saying whether the context is above the threshold all the same (asked
   * here, while the conversation and the plan's counts are at hand).
   */
  private async planFrom(source: ConversationSource, options: CompactOptions, estimator: TokenEstimator): Promise<Plan> {
    const conversation = await source.read();
    const prep = prepare(conversation, this.settings, estimator, options.instructions);
    if (prep === null) throw new NothingToCompactError(isContextAboveThreshold(conversation, this.settings, estimator));
    const historyRequests = userRequestsOf(prep.messagesToSummarize);
    const freshRequests = [...historyRequests, ...userRequestsOf(prep.turnPrefixMessages)];
    const countRequest = requestCounter(estimator, freshRequests, conversation.messages);
    const pathRoot = statedPathRoot(prep.previousSummary) ?? choosePathRoot([...prep.fileOperations.read, ...prep.fileOperations.modified]);
    const rootLine = pathRoot === undefined ? "" : pathRootLine(pathRoot);
    // Pinned beside an empty prose: the most room the block can take, since a request the prose quotes only shrinks it.
    const pinnedTokens = estimator.countText(pinRequests(prep.inheritedRequests, freshRequests, "", prep.summaryTokens, countRequest).text);
    const ceilings = offlineCeilings(prep, pinnedTokens + (rootLine === "" ? 0 : estimator.countText(rootLine) + 1));
    const request = (kind: SummaryKind, range: readonly Message[], input: FittedInput, previousSummary: string | undefined, maxTokens: number, offline: OfflineRoom): RangeRequest => {
      const from = range[0]!.index;
      const omittedFrom = from + (input.leftOut === "afterOpening" ? 1 : 0);
      const planned = { kind, from, to: from + range.length, omitted: input.omitted, omittedFrom, previousSummary, maxTokens, offline, pathRoot };
      return this.summarizer === OFFLINE_SUMMARIZER
        ? // The chosen summarizer needs the messages, which are at hand only now: it writes the summary here.
          { ...planned, prompt: undefined, written: offlineRangeSummary(planned, range, estimator, []) }
        : {
            ...planned,
            prompt: buildSummarizationPrompt({
              kind,
              transcript: input.transcript,
              previousSummary,
              omitted: input.omitted,
              leftOut: input.leftOut,
              instructions: options.instructions,
            }),
            written: undefined,
          };
    };
    const plan: Plan = {
      history:
        prep.messagesToSummarize.length === 0
          ? undefined
          : request("history", prep.messagesToSummarize, prep.historyInput, prep.previousSummary, prep.summaryTokens, ceilings.history),
      turnPrefix: prep.isSplitTurn
        ? request("turnPrefix", prep.turnPrefixMessages, prep.turnPrefixInput, undefined, prep.turnPrefixTokens, ceilings.turnPrefix)
        : undefined,
      previousSummary: prep.previousSummary,
      historyRequests,
      freshRequests,
      countRequest,
      rootLine,
      after: {
        kept: keptMessages(conversation.messages, prep),
        system: conversation.system,
        messagesBefore: conversation.messages.length,
        firstKeptIndex: prep.firstKeptIndex,
        tokensBefore: prep.tokensBefore,
        keptTokens: prep.keptTokens,
        isSplitTurn: prep.isSplitTurn,
        checkpointTurnId: prep.checkpointTurnId,
        inheritedRequests: prep.inheritedRequests,
        summaryTokens: prep.summaryTokens,
        fileOperations: prep.fileOperations,
        historyFileOperations: prep.historyFileOperations,
      },
    };
    estimator.releaseMessages();
    return plan;
  }

  private get summarizerName(): string {
    return this.summarizer === OFFLINE_SUMMARIZER ? OFFLINE_SUMMARIZER : this.summarizer.name;
  }

  /**
   * One summary. The offline summarizer writes it directly. A model gets up to
   * two attempts, each under the stall watchdog. A summary cut off by the token
   * cap or empty is rejected (an incomplete summary silently loses the newest
   * facts). A cancelled caller is never retried; an overflowing, rejected or
   * refused request is not retried either, since the same request cannot fit,
   * be accepted or be agreed to a second time. After
   * that, the offline summary of the whole range, marked degraded.
   */
  private async summarizeRange(
    range: RangeRequest,
    options: CompactOptions,
    estimator: TokenEstimator,
    /** The range's messages, read again: for the fallback to the offline summary. */
    rangeMessages: (range: RangeRequest) => Promise<readonly Message[]>,
  ): Promise<RangeSummary> {
    const summarizer = this.summarizer;
    if (range.written !== undefined) return range.written;
    if (summarizer === OFFLINE_SUMMARIZER || range.prompt === undefined) throw new Error("a range for the offline summarizer is written when planned");
    const { kind, omitted, previousSummary, maxTokens } = range;
    const { system, prompt } = range.prompt;
    const failures: Degradation[] = [];
    const report = (outcome: SummarizerCallReport["outcome"], started: number, detail: { error?: unknown; response?: SummarizationResponse }): void => {
      options.onSummarizerCall?.({
        kind,
        outcome,
        durationMs: performance.now() - started,
        ...(detail.error !== undefined && { error: detail.error }),
        ...(detail.response?.usage !== undefined && { usage: detail.response.usage }),
      });
    };
    const fail = (cause: DegradationCause, message: string): void => {
      failures.push({ kind, cause, message: `${kind} ${message}` });
    };
    for (let attempt = 1; attempt <= SUMMARY_ATTEMPTS; attempt++) {
      const started = performance.now();
      try {
        const response = await withStallWatchdog(this.settings.stallTimeoutMs, options.signal, (signal, onProgress, onWaiting) =>
          summarizer.summarize({
            kind,
            system,
            prompt,
            maxTokens,
            previousSummary,
            omitted,
            signal,
            onProgress,
            onWaiting,
          }),
        );
        // The model quotes the session, which may hold a summary's blocks: defused, they stay prose.
        const text = defuseBlockTags(response.text.trim());
        const outcome = response.stopReason === CONTEXT_WINDOW_EXCEEDED ? "overflow" : response.truncated ? "truncated" : text === "" ? "empty" : "ok";
        report(outcome, started, { response });
        if (outcome === "ok") {
          return { text, failures: [], writer: summarizer.name, unrepresented: indicesFrom(range.omittedFrom, omitted), previousSummaryCharsCut: 0 };
        }
        if (outcome === "overflow") {
          fail(outcome, "summarization request filled the summarizer's context window");
          break;
        }
        fail(outcome, outcome === "truncated" ? `summary stopped at the ${maxTokens}-token cap` : "summary was empty");
      } catch (err) {
        if (options.signal?.aborted) throw options.signal.reason;
        const cause = causeOfError(err);
        report(cause, started, { error: err });
        fail(cause, `${cause === "rejected" ? "summarizer's request was rejected" : "summarizer failed"}: ${describe(err)}`);
        if (failsAgainForSameRequest(cause)) break;
      }
    }
    return offlineRangeSummary(range, await rangeMessages(range), estimator, failures);
  }
}

/** What {@link Compactor.plan} hands on: the summaries to ask for, and what the result is built from afterwards. */
interface Plan {
  /** Undefined when there are no new complete turns to fold into the previous summary. */
  readonly history: RangeRequest | undefined;
  readonly turnPrefix: RangeRequest | undefined;
  readonly previousSummary: string | undefined;
  readonly historyRequests: readonly UserRequest[];
  readonly freshRequests: readonly UserRequest[];
  readonly countRequest: (text: string) => number;
  /** The line stating the directory paths are relative to, or empty (see pathRoot.ts). */
  readonly rootLine: string;
  readonly after: AfterSummaries;
}

/**
 * What the result needs once the summaries are written: the messages it
 * keeps and the parts of the preparation it reports (no transcripts, none
 * of the summarized range).
 */
type AfterSummaries = {
  readonly kept: KeptMessages;
  /** The conversation's top-level system prompt, as received (see Result.system). */
  readonly system: unknown;
  readonly messagesBefore: number;
} & Pick<
  Preparation,
  | "firstKeptIndex"
  | "tokensBefore"
  | "keptTokens"
  | "isSplitTurn"
  | "checkpointTurnId"
  | "inheritedRequests"
  | "summaryTokens"
  | "fileOperations"
  | "historyFileOperations"
>;

/**
 * The parts of a range to summarize an offline summary needs besides its
 * messages: where the range is, and the summary's caps.
 */
interface PlannedRange {
  readonly kind: SummaryKind;
  /** The range is the conversation's messages `from` (inclusive) to `to` (exclusive): the offline summary reads them all. */
  readonly from: number;
  readonly to: number;
  /** How many of the range's messages the prompt's transcript left out, and the index of the first of them. */
  readonly omitted: number;
  readonly omittedFrom: number;
  readonly previousSummary: string | undefined;
  readonly maxTokens: number;
  /** The offline summary's room for this range (see offlineCeilings). */
  readonly offline: OfflineRoom;
  /** The directory the offline summary writes paths relative to (see pathRoot.ts). */
  readonly pathRoot: string | undefined;
}

/**
 * One range to summarize: where it is, its prompt, and the summary's cap.
 * It holds no message: the prompt is all the summarizer gets.
 */
interface RangeRequest extends PlannedRange {
  /** Built from the range's fitted transcript; undefined for the offline summarizer, which needs none. */
  readonly prompt: { readonly system: string; readonly prompt: string } | undefined;
  /** The offline summary, when it is the chosen summarizer: written while planning, the messages at hand. */
  readonly written: RangeSummary | undefined;
}

/**
 * `prose` with the path root stated on top when paths in it may be relative
 * to it: an offline summary in it wrote them so, or the previous summary,
 * which a model's update carries lines of, stated the root (the model may
 * have left the line out or moved it down, where it is not read). Only once:
 * a previous summary that stands unchanged already states it there. (A
 * statement quoted lower down is not one; see pathRoot.ts.)
 */
function statingPathRoot(prose: string, rootLine: string, ranges: readonly RangeSummary[], previousSummary: string | undefined): string {
  if (rootLine === "" || statedPathRoot(prose) !== undefined) return prose;
  if (statedPathRoot(previousSummary) === undefined && !ranges.some((r) => r.writer === OFFLINE_SUMMARIZER)) return prose;
  return joinSections([rootLine, prose]);
}

/**
 * The offline prose's ceilings. The whole offline summary, prose and pinned
 * requests (the file lists aside), stays within {@link OFFLINE_SUMMARY_TOKENS}:
 * the prose gets what the requests leave of it, so a session with a few short
 * requests gets a fuller summary, and never less than the ceiling minus the
 * requests block's own cap. A split turn's head gets a quarter of the prose
 * beside a history summary, all of it when the head is all there is. A
 * previous summary the history summary carries whole may take it past the
 * ceiling, up to the summary budget (see OfflineRoom).
 */
function offlineCeilings(prep: Preparation, pinnedTokens: number): { history: OfflineRoom; turnPrefix: OfflineRoom } {
  const prose = OFFLINE_SUMMARY_TOKENS - pinnedTokens;
  if (!prep.isSplitTurn || prep.messagesToSummarize.length === 0) {
    return { history: offlineRoom(prose, prep.summaryTokens - pinnedTokens), turnPrefix: offlineRoom(prose, prose) };
  }
  const turnPrefix = Math.floor(prose / 4);
  return { history: offlineRoom(prose - turnPrefix, prep.summaryTokens - pinnedTokens - turnPrefix), turnPrefix: offlineRoom(turnPrefix, turnPrefix) };
}

/**
 * An offline summary's room: `tokens` for what it extracts from its range,
 * and `capTokens` for the previous summary it carries whole. The cap is what
 * the summary budget leaves beside the pinned requests and a turn prefix, so
 * a carried summary never makes the whole outgrow the budget a model's
 * summary has; it is never below the ceiling, so a range with no previous
 * summary loses nothing by it.
 */
interface OfflineRoom {
  readonly tokens: number;
  readonly capTokens: number;
}

function offlineRoom(tokens: number, capTokens: number): OfflineRoom {
  return { tokens, capTokens: Math.max(tokens, capTokens) };
}

/** The offline summary of a range (its `messages`): by choice (no `failures`) or as the degraded fallback. */
function offlineRangeSummary(range: PlannedRange, messages: readonly Message[], estimator: TokenEstimator, failures: readonly Degradation[]): RangeSummary {
  const offline = buildOfflineSummary(
    {
      messages,
      previousSummary: range.previousSummary,
      budgetTokens: Math.min(range.maxTokens, range.offline.tokens),
      capTokens: Math.min(range.maxTokens, range.offline.capTokens),
      pathRoot: range.pathRoot,
    },
    estimator,
  );
  return {
    // Its lines quote the session (a todo, a path), which may hold a summary's blocks: defused, they stay prose.
    text: defuseBlockTags(offline.text),
    failures,
    writer: OFFLINE_SUMMARIZER,
    unrepresented: offline.unrepresented.map((m) => m.index),
    previousSummaryCharsCut: offline.previousSummaryCharsCut,
  };
}

/** `count` consecutive message indices from `from`. */
function indicesFrom(from: number, count: number): number[] {
  return Array.from({ length: count }, (_, i) => from + i);
}

/**
 * Token counts for the pinned requests, each text tokenized at most once per
 * job: a request that is its message's only block, word for word, is priced
 * by the message's own count when the estimator already has it (a request
 * read out of harness markup, such as a slash command, or trimmed, is not
 * that block's text and is counted as written). Those counts are taken now,
 * from `messages` (the conversation's), since the estimator lets go of its
 * messages once the prompts are built.
 */
function requestCounter(estimator: TokenEstimator, requests: readonly UserRequest[], messages: readonly Message[]): (text: string) => number {
  const counts = new Map<string, number>();
  for (const { text, messageIndex } of requests) {
    const message = messageIndex === undefined ? undefined : messages[messageIndex];
    if (message === undefined || message.blocks.length !== 1) continue;
    const only = message.blocks[0]!;
    if (only.type === "text" && only.text === text && estimator.isCounted(message)) {
      counts.set(text, estimator.count(message) - MESSAGE_OVERHEAD_TOKENS * estimator.scaleFactor);
    }
  }
  return (text) => {
    let n = counts.get(text);
    if (n === undefined) {
      n = estimator.countText(text);
      counts.set(text, n);
    }
    return n;
  };
}

/**
 * The summary made of `sections`. Its pinned requests, file lists and offline
 * lines quote the conversation, which can hold lone surrogates; the summary is
 * compactd's own text and is valid Unicode (see wellFormedText.ts).
 */
function summaryOf(sections: readonly string[]): string {
  return wellFormed(joinSections(sections));
}

function joinSections(sections: readonly string[]): string {
  return sections.filter((s) => s !== "").join("\n\n");
}

/** A failed call in words: the provider's status, error type and own message when it gave them, else the error's message. */
function describe(err: unknown): string {
  const { status, type, message } = providerAnswerOf(err);
  const said = message ?? (err instanceof Error ? err.message : String(err));
  const answer = [status === undefined ? undefined : `HTTP ${status}`, type].filter((part) => part !== undefined).join(" ");
  return answer === "" ? said : `${answer}: ${said}`;
}
