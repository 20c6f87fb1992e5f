/**
 * `compactd/client`: what an agent needs to use the compaction service, and
 * nothing of the service itself (no Redis, no queue, no HTTP server).
 *
 * - {@link CompactdClient} calls the API; {@link verifyWebhook} reads its
 *   signed callbacks; {@link applyCompaction} splices a result into a
 *   conversation that kept growing, refusing a stale one.
 * - The core's decision functions, so an agent loop can tell when to ask:
 *   {@link shouldCompact} (the threshold, from the provider's usage;
 *   {@link isAboveThreshold} is its comparison alone, for a result stored
 *   by a service version from before `stillAboveThreshold`),
 *   {@link isOverflowError} (a request refused because it does not fit the
 *   window; one refused for its size in bytes is not) and
 *   {@link responseHitContextLimit} (a reply cut short by the window).
 */
export {
  CompactdClient,
  MAX_WAIT_PER_REQUEST_SECONDS,
  type BatchItem,
  type BatchOptions,
  type CompactdClientOptions,
  type CompactOptions,
  type GetOptions,
} from "./compactdClient.js";
export { CompactdApiError, CompactdConnectionError } from "./clientErrors.js";
export { ErrorCodes, type ErrorCode } from "./errorCodes.js";
export type * from "./apiTypes.js";
export { verifyWebhook, WebhookVerificationError, type WebhookHeaders } from "./verifyWebhook.js";
export {
  WEBHOOK_EVENT_TYPES,
  type BatchCompletedEvent,
  type CompactionCompletedEvent,
  type CompactionFailedEvent,
  type WebhookEvent,
} from "./webhookEvents.js";
export { applyCompaction, StaleCompactionError, type CompactionSwap } from "./applyCompaction.js";
export { replacesOf } from "../core/replaces.js";
export { isAboveThreshold, normalizeSettings, shouldCompact, type Settings, type SettingsInput } from "../core/settings.js";
export { isOverflowError } from "../core/overflow.js";
export { responseHitContextLimit, type NormalizedResponse } from "../core/contextLimit.js";
