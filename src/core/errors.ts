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
  constructor() {
    super("compaction: nothing outside the keep-recent budget");
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
