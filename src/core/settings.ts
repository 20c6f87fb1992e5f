/**
 * When compaction runs and how much it keeps.
 *
 * Every budget the rest of the core uses is derived here, from the four numbers
 * a caller actually knows (window, reserve, keep-recent, summary cap), so that
 * the rules that make compaction terminate live in one file.
 */

/**
 * How much recent conversation survives a compaction untouched. It is what
 * makes compaction terminate: whatever the context grew to, it comes out of a
 * compaction at roughly summary + this, which is far below any sane threshold,
 * so the next round cannot immediately re-trigger.
 */
export const DEFAULT_KEEP_RECENT_TOKENS = 20_000;

/** The floor on room kept free for the next response. */
export const DEFAULT_RESERVE_TOKENS = 16_384;

/** How long a summarization stream may go silent before it is cancelled. */
export const DEFAULT_SUMMARIZATION_STALL_TIMEOUT_MS = 120_000;

/**
 * The longest stall timeout the core, the API and the CLI take: an hour. A stream
 * silent that long is dead, and the agent waiting on it would rather have a
 * degraded summary; far longer ones are typos (and past 2^31 ms no timer
 * holds them, see timerDelay.ts).
 */
export const MAX_SUMMARIZATION_STALL_TIMEOUT_MS = 3_600_000;

/**
 * The shortest stall timeout the API and the CLI take: a second. A provider's
 * first event takes longer than a few milliseconds, so a shorter timeout
 * (`--stall-timeout-ms 120`, meant as seconds) would degrade every summary.
 * The core itself takes any.
 */
export const MIN_SUMMARIZATION_STALL_TIMEOUT_MS = 1_000;

/**
 * The largest token count (window, budget, reported usage) the API and the
 * CLI take: a hundred million. No model's window comes near it, so a larger
 * one is a typo, and one as large as 2^53 would come back as absurd token
 * figures in the result.
 */
export const MAX_TOKEN_COUNT = 100_000_000;

/**
 * Summaries shorter than this cannot hold the structured sections at all, so a
 * cap derived from a tiny reserve is raised to it.
 */
export const MIN_SUMMARY_TOKENS = 1024;

/**
 * Least room a window must leave besides the reserve: a minimal summary and a
 * recent tail as large. A smaller window would "compact" to a tail of a few
 * hundred tokens, which helps no agent, so callers refuse it instead.
 */
export const MIN_USABLE_TOKENS = 2 * MIN_SUMMARY_TOKENS;

/** The smallest context window compaction can work in while `reserveTokens` stay free. */
export function minimumContextWindow(reserveTokens: number = DEFAULT_RESERVE_TOKENS): number {
  return reserveTokens + MIN_USABLE_TOKENS;
}

/** The split-turn prefix summary needs less room, but not less than this. */
const MIN_TURN_PREFIX_SUMMARY_TOKENS = 512;

/**
 * Share of the summarizer input budget held back because providers count
 * tokens their own way and our estimate is not theirs.
 */
const SUMMARIZER_INPUT_SAFETY = 0.9;

export interface Settings {
  /**
   * Turns automatic (threshold) compaction on. Disabled still allows an
   * explicit overflow-recovery or manual compaction, which is a repair, not a
   * policy.
   */
  readonly enabled: boolean;
  /** The model's context window. Zero disables compaction: without a window there is no budget. */
  readonly contextWindow: number;
  /** The part of the window history may not occupy because the next response has to fit there. */
  readonly reserveTokens: number;
  /** Token budget of recent messages kept verbatim. */
  readonly keepRecentTokens: number;
  /** Caps the summarization completion. Zero falls back to the reserve-derived budget alone. */
  readonly maxSummaryTokens: number;
  /** How long a summarization stream may produce no output before it is cancelled. */
  readonly stallTimeoutMs: number;
}

export type SettingsInput = Partial<Settings>;

/** The budgets a caller may set per compaction, beside the window it always gives. */
export type BudgetOverrides = Pick<SettingsInput, "reserveTokens" | "keepRecentTokens" | "maxSummaryTokens" | "stallTimeoutMs">;

/**
 * Fills in defaults and reconciles budgets that cannot all be honored at once.
 *
 * Keep-recent is lowered to a quarter of the usable window when it is larger:
 * keeping half the window verbatim would put the compacted context back over
 * the threshold within a round or two, which is the compaction loop again.
 *
 * Throws a TypeError naming the field (`settings.stallTimeoutMs`) for a
 * number that is negative, fractional or not finite, a stall timeout above
 * {@link MAX_SUMMARIZATION_STALL_TIMEOUT_MS}, or an `enabled` that is not a
 * boolean.
 */
export function normalizeSettings(input: SettingsInput = {}): Settings {
  const contextWindow = wholeOr(input, "contextWindow", 0);
  const reserveTokens = wholeOr(input, "reserveTokens", DEFAULT_RESERVE_TOKENS);
  let keepRecentTokens = wholeOr(input, "keepRecentTokens", DEFAULT_KEEP_RECENT_TOKENS);
  if (contextWindow > 0) {
    const quarterOfUsable = Math.floor((contextWindow - reserveTokens) / 4);
    if (keepRecentTokens > quarterOfUsable) keepRecentTokens = Math.max(quarterOfUsable, 1);
  }
  return {
    enabled: flagOr(input, "enabled", true),
    contextWindow,
    reserveTokens,
    keepRecentTokens,
    maxSummaryTokens: wholeOr(input, "maxSummaryTokens", 0),
    stallTimeoutMs: wholeOr(input, "stallTimeoutMs", DEFAULT_SUMMARIZATION_STALL_TIMEOUT_MS, MAX_SUMMARIZATION_STALL_TIMEOUT_MS),
  };
}

/**
 * The context size above which automatic compaction runs: the window minus
 * the reserve, at least 1. Zero (off) without a window.
 */
export function threshold(s: Settings): number {
  if (s.contextWindow <= 0) return 0;
  return Math.max(s.contextWindow - s.reserveTokens, 1);
}

/**
 * Whether `contextTokens` lie strictly above the threshold; never without a
 * window. The one definition of "above": {@link shouldCompact} asks it of the
 * context before a compaction, and the compactor of its own output after one
 * (Result.stillAboveThreshold), so the two cannot disagree on a boundary.
 */
export function isAboveThreshold(s: Settings, contextTokens: number): boolean {
  const t = threshold(s);
  return t > 0 && contextTokens > t;
}

/** Whether the current context has crossed the threshold (strictly above it) while automatic compaction is on. */
export function shouldCompact(s: Settings, contextTokens: number): boolean {
  return s.enabled && isAboveThreshold(s, contextTokens);
}

/**
 * Completion cap of the history summary: four fifths of the reserve, capped by
 * `maxSummaryTokens` and by keep-recent (a summary larger than the tail it
 * precedes frees nothing), never below {@link MIN_SUMMARY_TOKENS}.
 */
export function summaryBudget(s: Settings): number {
  let cap = Math.floor((s.reserveTokens * 4) / 5);
  if (s.maxSummaryTokens > 0) cap = Math.min(cap, s.maxSummaryTokens);
  cap = Math.min(cap, s.keepRecentTokens);
  return Math.max(cap, MIN_SUMMARY_TOKENS);
}

/** Completion cap of the split-turn prefix summary: half the summary cap, never below 512. */
export function turnPrefixBudget(s: Settings): number {
  return Math.max(Math.floor(summaryBudget(s) / 2), MIN_TURN_PREFIX_SUMMARY_TOKENS);
}

/**
 * How many transcript tokens one summarization request may carry: the window
 * less the completion cap, the prompt's own text and the previous summary, with
 * a tenth held back (see {@link SUMMARIZER_INPUT_SAFETY}). Without this bound
 * the summarization request itself overflows and the session is stuck for good.
 */
export function summarizerInputBudget(
  s: Settings,
  completionCap: number,
  promptOverheadTokens: number,
  previousSummaryTokens: number,
): number {
  const room = s.contextWindow - completionCap - promptOverheadTokens - previousSummaryTokens;
  return Math.max(Math.floor(room * SUMMARIZER_INPUT_SAFETY), 0);
}

type NumericSetting = "contextWindow" | "reserveTokens" | "keepRecentTokens" | "maxSummaryTokens" | "stallTimeoutMs";

/**
 * The setting `field` of `input`, or the fallback when it is absent or zero
 * (zero is how callers say "unset"). Anything else but a whole number from 0
 * to `most` is refused, naming the field: a library caller gets no schema,
 * and a NaN or a typo'd timeout silently replaced by a default (or, past 2^31
 * ms, capped by the timer) is a setting the caller believes and never had.
 */
function wholeOr(input: SettingsInput, field: NumericSetting, fallback: number, most = Number.MAX_SAFE_INTEGER): number {
  const value: unknown = input[field];
  if (value === undefined || value === 0) return fallback;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0 || value > most) {
    const unit = field === "stallTimeoutMs" ? "milliseconds" : "tokens";
    throw new TypeError(`settings.${field} must be a whole number of ${unit} from 0 to ${most}, got ${shown(value)}`);
  }
  return value;
}

/** The flag `field` of `input`, or the fallback when absent. A string "false" is truthy, so anything but a boolean is refused. */
function flagOr(input: SettingsInput, field: "enabled", fallback: boolean): boolean {
  const value: unknown = input[field];
  if (value === undefined) return fallback;
  if (typeof value !== "boolean") throw new TypeError(`settings.${field} must be true or false, got ${shown(value)}`);
  return value;
}

/** A refused value as the error shows it: a string quoted, so `"2000"` is told apart from 2000. */
function shown(value: unknown): string {
  return typeof value === "string" ? JSON.stringify(value) : String(value);
}
