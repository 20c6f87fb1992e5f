/**
 * The only way the core reaches a language model.
 *
 * The core builds the prompt itself (see prompts.ts) so that every summarizer
 * gets the same instructions and the input budget can account for them; a
 * summarizer only has to send it and report how generation ended. Keeping the
 * provider behind this interface is what lets tests drive every failure mode
 * without a network. The offline summarizer is not one of these: it is the
 * core's own (see offlineSummary.ts), reached without any summarizer call.
 */
import type { DegradationCause } from "./degradation.js";

/** Which of the two summaries of a compaction is being asked for. */
export type SummaryKind = "history" | "turnPrefix";

export interface SummarizationRequest {
  readonly kind: SummaryKind;
  /** System prompt for the summarization call. */
  readonly system: string;
  /**
   * The user prompt: transcript first, instructions last. It is all a
   * summarizer gets of the conversation: the messages themselves are not
   * held while the call runs (see "Memory per job in flight" in
   * docs/OPERATIONS.md).
   */
  readonly prompt: string;
  /** Completion cap for this call. */
  readonly maxTokens: number;
  /** The previous compaction's summary when this request updates it. */
  readonly previousSummary: string | undefined;
  /** How many messages were left out because they did not fit (the oldest, or those right after the opening request; the prompt says which). */
  readonly omitted: number;
  /** Aborted when the caller cancels or the stall watchdog fires. */
  readonly signal: AbortSignal;
  /**
   * Call on every streamed event of content (thinking included), and when a
   * new attempt is sent. The stall watchdog is reset by it; response headers
   * alone are not progress, nor are keep-alive pings.
   */
  readonly onProgress: () => void;
  /**
   * Call when the summarizer waits on purpose before its next attempt (a
   * provider's `retry-after`): the stall watchdog stops until the next
   * `onProgress`, so a wait the provider asked for is not taken for a stall.
   */
  readonly onWaiting: () => void;
}

export interface SummarizationResponse {
  readonly text: string;
  /** Generation stopped on the token cap: the summary is incomplete and is rejected. */
  readonly truncated: boolean;
  /**
   * The provider's stop reason, when it has one. `model_context_window_exceeded`
   * means the request itself did not fit: asking again cannot help.
   */
  readonly stopReason?: string;
  readonly usage?: { readonly inputTokens: number; readonly outputTokens: number };
}

export interface Summarizer {
  /** Short name for logs and metrics (`anthropic`); `offline` is taken by the compactor's own summarizer. */
  readonly name: string;
  /** The model it asks, when it has one: named in traces, never part of the request. */
  readonly model?: string;
  summarize(request: SummarizationRequest): Promise<SummarizationResponse>;
}

/**
 * One summarizer call as it ended, as the compactor classified it
 * (CompactOptions.onSummarizerCall): what metrics and logs need, so nothing
 * downstream classifies a failure again.
 */
export interface SummarizerCallReport {
  readonly kind: SummaryKind;
  /** `ok`: a summary the compactor kept; anything else is how the call failed. */
  readonly outcome: "ok" | DegradationCause;
  readonly durationMs: number;
  /** What a failed call threw. */
  readonly error?: unknown;
  /** The provider's token counts, when it answered with them. */
  readonly usage?: SummarizationResponse["usage"];
}
