/**
 * Errors the core raises on purpose. Each has a stable `code` so adapters (CLI
 * exit codes, HTTP status codes, job outcomes) can map them without string
 * matching on messages.
 */

/**
 * The context cannot be made smaller: everything outside the keep-recent budget
 * is already gone. Callers must treat this as a stop signal rather than retrying,
 * or they reproduce the every-round summarization loop compaction exists to
 * prevent.
 */
export class NothingToCompactError extends Error {
  readonly code = "nothing_to_compact";
  /**
   * @param stillAboveThreshold The context is above the threshold all the
   * same (what is kept verbatim is too large for the window; see
   * contextAboveThreshold.ts). A stop signal alone reads as "all is well";
   * this agent cannot continue against its model, and compaction is not
   * the remedy, so the error says so, as a result's `stillAboveThreshold` does.
   */
  constructor(readonly stillAboveThreshold: boolean) {
    super(`compaction: nothing outside the keep-recent budget${stillAboveThreshold ? ", yet the context is above the threshold (window minus reserve), which compaction cannot shrink" : ""}`);
    this.name = "NothingToCompactError";
  }
}

/**
 * Automatic (threshold) compaction was asked for while it is disabled. Overflow
 * recovery and manual compaction are still allowed: they are repairs the caller
 * asked for explicitly, not policy.
 */
export class CompactionDisabledError extends Error {
  readonly code = "compaction_disabled";
  constructor() {
    super("compaction: automatic compaction is disabled; only overflow and manual compactions run");
    this.name = "CompactionDisabledError";
  }
}

/**
 * The input is not a conversation the core can compact. `field` is a path into
 * the input (`messages[3].content[0].tool_use_id`) so the caller can fix it
 * without reading the core's source.
 */
export class InvalidConversationError extends Error {
  readonly code = "invalid_conversation";
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(`${field}: ${message}`);
    this.name = "InvalidConversationError";
  }
}

/**
 * A summarization stream produced nothing for longer than the stall timeout.
 * It is the `reason` the compactor aborts the summarizer's signal with, so a
 * wrapper (metrics, logs) can tell a stall from a caller's cancellation.
 */
export class SummarizationStalledError extends Error {
  readonly code = "summarization_stalled";
  constructor(readonly timeoutMs: number) {
    super(`compaction: summarization produced no output for ${timeoutMs} ms`);
    this.name = "SummarizationStalledError";
  }
}

/**
 * The model declined to write the summary (Anthropic's `stop_reason:
 * "refusal"`). Its text is an explanation, not a summary; accepting it would
 * replace the history with a refusal. Asking the same again gets the same
 * answer, so the compactor does not.
 */
export class SummaryRefusedError extends Error {
  readonly code = "summary_refused";
  constructor(readonly model: string) {
    super(`${model} refused to write the summary (stop_reason "refusal")`);
    this.name = "SummaryRefusedError";
  }
}

/**
 * The summarizer's answer ended without the provider saying the summary was
 * complete, and not on the token cap either (Anthropic's `pause_turn` or
 * `tool_use`, no stop reason at all, or one added after this code). Neither a
 * summary nor a truncated one: what its missing part would have held is
 * unknown, so it is not taken, and not blamed on a cap that raising would not fix.
 */
export class SummaryUnfinishedError extends Error {
  readonly code = "summary_unfinished";
  constructor(readonly stopReason: string | null) {
    super(`the summary stopped unfinished (stop_reason ${stopReason === null ? "missing" : JSON.stringify(stopReason)})`);
    this.name = "SummaryUnfinishedError";
  }
}
