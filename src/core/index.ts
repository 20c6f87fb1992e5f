/**
 * The compaction core: pure logic shared by the CLI, the worker and agents
 * that compact in-process. It reaches a language model only through the
 * {@link Summarizer} it is handed.
 */
export type { Block, Conversation, ConversationFormat, Message, MessageKind } from "./message.js";
export { parseConversation, detectFormat, type FormatOption } from "./formats/parseConversation.js";
export { checkToolPairing, type ToolPairing, type ToolPairingIssue } from "./toolPairing.js";
export {
  DEFAULT_KEEP_RECENT_TOKENS,
  DEFAULT_RESERVE_TOKENS,
  DEFAULT_SUMMARIZATION_STALL_TIMEOUT_MS,
  MAX_SUMMARIZATION_STALL_TIMEOUT_MS,
  MIN_SUMMARIZATION_STALL_TIMEOUT_MS,
  MAX_TOKEN_COUNT,
  MIN_USABLE_TOKENS,
  minimumContextWindow,
  normalizeSettings,
  isAboveThreshold,
  shouldCompact,
  threshold,
  summaryBudget,
  turnPrefixBudget,
  summarizerInputBudget,
  type Settings,
  type SettingsInput,
  type BudgetOverrides,
} from "./settings.js";
export { TokenEstimator, IMAGE_TOKENS, DOCUMENT_TOKENS, MESSAGE_OVERHEAD_TOKENS, type TokenEstimatorOptions, type KnownTokenCounts } from "./tokenEstimator.js";
export { findCutPoint, type CutPoint } from "./cutPoint.js";
export { planCut, type CutPlan } from "./cutPlan.js";
export { prepare, type Preparation } from "./prepare.js";
export { fitSummarizerInput, type FittedInput, type LeaveOut } from "./fitSummarizerInput.js";
export { apply, keptMessages, type KeptMessages } from "./apply.js";
export { summaryMessage, previousSummaryOf, SUMMARY_PREAMBLE } from "./summaryEnvelope.js";
export {
  createCompactor,
  Compactor,
  OFFLINE_SUMMARIZER,
  type SummarizerChoice,
  REASONS,
  type Checkpoint,
  type CompactOptions,
  type CompactorOptions,
  type ConversationSource,
  type Reason,
  type Result,
} from "./compactor.js";
export type { Summarizer, SummarizationRequest, SummarizationResponse, SummarizerCallReport, SummaryKind } from "./summarizer.js";
export { isTransient, type Degradation, type DegradationCause } from "./degradation.js";
export { buildSummarizationPrompt } from "./prompts.js";
export { buildOfflineSummary, OFFLINE_SUMMARY_TOKENS, type OfflineSummary, type OfflineSummaryInput } from "./offlineSummary.js";
export { userRequestsOf, pinRequests, splitPinnedRequests, type UserRequest, type PinnedRequests } from "./pinnedRequests.js";
export {
  NothingToCompactError,
  CompactionDisabledError,
  InvalidConversationError,
  SummarizationStalledError,
} from "./errors.js";
export { isOverflowError } from "./overflow.js";
export { responseHitContextLimit, type NormalizedResponse } from "./contextLimit.js";
export { replacesOf, canonicalJson, type Replaces } from "./replaces.js";
