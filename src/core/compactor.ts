/**
 * Summarizes conversation history into a checkpoint: the one stateful piece of
 * the core, holding settings and a summarizer and calling the pure steps.
 */
import { apply } from "./apply.js";
import { buildArchive } from "./archive.js";
import { CompactionDisabledError, NothingToCompactError } from "./errors.js";
import { formatFileOperations } from "./fileOperations.js";
import type { FittedInput } from "./fitSummarizerInput.js";
import type { Conversation } from "./message.js";
import { isOverflowError } from "./overflow.js";
import { prepare, type Preparation } from "./prepare.js";
import { buildSummarizationPrompt } from "./prompts.js";
import { normalizeSettings, type Settings, type SettingsInput } from "./settings.js";
import { withStallWatchdog } from "./stallWatchdog.js";
import type { Summarizer, SummaryKind } from "./summarizer.js";
import { summaryText } from "./summaryEnvelope.js";
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
   * The summary holds a raw archive because the summarizer failed. It is still
   * a checkpoint: the next compaction folds it in as the previous summary, and
   * refusing it would make a failing summarizer re-run on every turn.
   */
  readonly degraded: boolean;
}

/** What one compaction did. */
export interface Result {
  /** The list that replaces the input's messages (Anthropic's top-level `system` is unchanged). */
  readonly messages: unknown[];
  readonly summary: string;
  readonly reason: Reason;
  readonly tokensBefore: number;
  readonly tokensAfter: number;
  readonly messagesBefore: number;
  readonly messagesAfter: number;
  /**
   * At least one summary came from the raw archive because the summarizer
   * failed. The context still shrank; its memory is just coarser.
   */
  readonly degraded: boolean;
  /** Why the archive was used, so a degraded result is never an opaque one. Null when not degraded. */
  readonly degradedReason: string | null;
  /** The cut divided a single turn, so a turn-prefix summary was generated alongside the history summary. */
  readonly splitTurn: boolean;
  /** The part of this compaction a later turn can start from, or null when there is none. */
  readonly checkpoint: Checkpoint | null;
  /** The oldest messages left out of the summarization requests because they did not fit. */
  readonly omitted: number;
  /** Index, in the input's messages, of the first message kept verbatim. */
  readonly firstKeptIndex: number;
}

export interface CompactorOptions {
  readonly settings: SettingsInput;
  readonly summarizer: Summarizer | undefined;
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
}

/** The stop reason of a request that did not fit the summarizer's window (Anthropic, Bedrock, z.ai). */
const CONTEXT_WINDOW_EXCEEDED = "model_context_window_exceeded";

/** A summarizer call gets this many attempts before the archive is used. */
const SUMMARY_ATTEMPTS = 2;

/**
 * Builds a compactor, or returns null when compaction cannot run (no context
 * window, no summarizer), so a caller can treat null as "feature off" without
 * a second flag.
 */
export function createCompactor(options: CompactorOptions): Compactor | null {
  const settings = normalizeSettings(options.settings);
  if (settings.maxContextTokens <= 0 || options.summarizer === undefined) return null;
  return new Compactor(settings, options.summarizer);
}

interface RangeSummary {
  readonly text: string;
  readonly degraded: boolean;
  readonly failure: string | undefined;
}

export class Compactor {
  constructor(
    readonly settings: Settings,
    private readonly summarizer: Summarizer,
  ) {}

  /**
   * Compacts `conversation`. Throws {@link NothingToCompactError} when nothing
   * lies outside the keep-recent budget (no LLM call is made), and
   * {@link CompactionDisabledError} for a threshold compaction while disabled.
   * Summarizer failures do not throw: they produce a degraded result.
   */
  async compact(conversation: Conversation, options: CompactOptions): Promise<Result> {
    if (options.reason === "threshold" && !this.settings.enabled) throw new CompactionDisabledError();
    const estimator = new TokenEstimator({ usageTokens: options.usageTokens, known: options.knownCounts });
    const prep = prepare(conversation, this.settings, estimator, options.instructions);
    if (prep === null) throw new NothingToCompactError();

    const [history, prefix] = await Promise.all([
      this.summarizeHistory(prep, options, estimator),
      prep.isSplitTurn
        ? this.summarizeRange("turnPrefix", prep.turnPrefixInput, undefined, prep.turnPrefixTokens, options, estimator)
        : undefined,
    ]);

    const files = formatFileOperations(prep.fileOperations);
    const prefixSection = prefix === undefined ? "" : `## Turn in progress (its start was compacted)\n\n${prefix.text}`;
    const summary = joinSections([history.text, prefixSection, files]);
    const messages = apply(conversation.messages, prep, summary);
    const failures = [history, prefix].flatMap((r) => (r?.failure === undefined ? [] : [r.failure]));
    const degraded = history.degraded || prefix?.degraded === true;
    return {
      messages,
      summary,
      reason: options.reason,
      tokensBefore: prep.tokensBefore,
      tokensAfter: Math.round(
        prep.keptTokens + estimator.countText(summaryText(summary)) + MESSAGE_OVERHEAD_TOKENS * estimator.scaleFactor,
      ),
      messagesBefore: conversation.messages.length,
      messagesAfter: messages.length,
      degraded,
      degradedReason: degraded ? failures.join("; ") : null,
      splitTurn: prep.isSplitTurn,
      checkpoint:
        prep.checkpointTurnId === undefined
          ? null
          : { turnId: prep.checkpointTurnId, summary: joinSections([history.text, formatFileOperations(prep.historyFileOperations)]), degraded: history.degraded },
      omitted: prep.omittedHistory + prep.omittedTurnPrefix,
      firstKeptIndex: prep.firstKeptIndex,
    };
  }

  /**
   * The history summary. With no new complete turns to fold in (the whole
   * summarized range is the head of the current turn), the previous summary
   * stands as it is and no call is made for it.
   */
  private summarizeHistory(prep: Preparation, options: CompactOptions, estimator: TokenEstimator): Promise<RangeSummary> {
    if (prep.messagesToSummarize.length === 0) {
      return Promise.resolve({ text: prep.previousSummary ?? "", degraded: false, failure: undefined });
    }
    return this.summarizeRange("history", prep.historyInput, prep.previousSummary, prep.summaryTokens, options, estimator);
  }

  /**
   * One summary with up to two attempts, each under the stall watchdog. A
   * summary cut off by the token cap or empty is rejected (an incomplete summary
   * silently loses the newest facts). A cancelled caller is never retried; an
   * overflowing request is not retried either, since the same request cannot
   * fit a second time. After that, the raw archive.
   */
  private async summarizeRange(
    kind: SummaryKind,
    input: FittedInput,
    previousSummary: string | undefined,
    maxTokens: number,
    options: CompactOptions,
    estimator: TokenEstimator,
  ): Promise<RangeSummary> {
    const { system, prompt } = buildSummarizationPrompt({
      kind,
      transcript: input.transcript,
      previousSummary,
      omitted: input.omitted,
      instructions: options.instructions,
    });
    const failures: string[] = [];
    for (let attempt = 1; attempt <= SUMMARY_ATTEMPTS; attempt++) {
      try {
        const response = await withStallWatchdog(this.settings.stallTimeoutMs, options.signal, (signal, onProgress) =>
          this.summarizer.summarize({
            kind,
            system,
            prompt,
            maxTokens,
            messages: input.messages,
            previousSummary,
            omitted: input.omitted,
            signal,
            onProgress,
          }),
        );
        const text = response.text.trim();
        if (response.stopReason === CONTEXT_WINDOW_EXCEEDED) {
          failures.push(`${kind} summarization request filled the summarizer's context window`);
          break;
        }
        if (response.truncated) failures.push(`${kind} summary stopped at the ${maxTokens}-token cap`);
        else if (text === "") failures.push(`${kind} summary was empty`);
        else {
          const degraded = response.degraded === true;
          const failure = degraded ? `${kind} summary from the offline ${this.summarizer.name} summarizer` : undefined;
          return { text, degraded, failure };
        }
      } catch (err) {
        if (options.signal?.aborted) throw options.signal.reason;
        failures.push(`${kind} summarizer failed: ${describe(err)}`);
        if (isOverflowError(err)) break;
      }
    }
    const text = buildArchive({ messages: input.messages, omitted: input.omitted, previousSummary, budgetTokens: maxTokens }, estimator);
    return { text, degraded: true, failure: failures.join("; ") };
  }
}

function joinSections(sections: readonly string[]): string {
  return sections.filter((s) => s !== "").join("\n\n");
}

function describe(err: unknown): string {
  if (err instanceof Error) {
    const status = (err as { status?: unknown }).status;
    return typeof status === "number" ? `HTTP ${status}: ${err.message}` : err.message;
  }
  return String(err);
}
