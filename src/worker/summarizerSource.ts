/**
 * Which summarizer a job gets.
 *
 * With `ANTHROPIC_API_KEY` set, the Anthropic summarizer for the job's
 * requested model (or the configured one); every job shares one SDK client and
 * so one connection pool. Without a key, the offline summarizer: a structured
 * summary extracted without a model, so the service still compacts instead of
 * refusing work.
 */
import type { Config } from "../config.js";
import { OFFLINE_SUMMARIZER, type SummarizerChoice } from "../core/compactor.js";
import { createAnthropicClient, createAnthropicSummarizer, DEFAULT_MODEL } from "../summarizers/anthropic.js";

/**
 * SDK retries inside one summarizer attempt (429, 5xx, 529, honouring
 * retry-after). Longer outages are the job's retries' business, with their
 * exponential backoff, so a worker slot is not held through them.
 */
const SDK_RETRIES = 2;

export type SummarizerSource = (model: string | undefined) => SummarizerChoice;

export function createSummarizerSource(config: Pick<Config, "anthropicApiKey" | "anthropicBaseUrl" | "model">): SummarizerSource {
  if (config.anthropicApiKey === undefined) {
    return () => OFFLINE_SUMMARIZER;
  }
  const client = createAnthropicClient({ apiKey: config.anthropicApiKey, baseURL: config.anthropicBaseUrl, maxRetries: SDK_RETRIES });
  const defaultModel = config.model ?? DEFAULT_MODEL;
  return (model) => createAnthropicSummarizer({ client, model: model ?? defaultModel, maxRetries: SDK_RETRIES });
}
