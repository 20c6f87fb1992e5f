/**
 * The offline summarizer: no model, no network, no key.
 *
 * It lets the CLI (and a worker without an API key) compact for real, with the
 * same raw archive the compactor falls back to when a model fails. Every
 * response is flagged degraded, so nobody mistakes it for a summary.
 */
import { buildArchive } from "../core/archive.js";
import type { Summarizer } from "../core/summarizer.js";
import { TokenEstimator } from "../core/tokenEstimator.js";

export function createArchiveSummarizer(): Summarizer {
  return {
    name: "archive",
    async summarize(request) {
      const text = buildArchive(
        {
          messages: request.messages,
          omitted: request.omitted,
          previousSummary: request.previousSummary,
          budgetTokens: request.maxTokens,
        },
        new TokenEstimator(),
      );
      return { text, truncated: false, degraded: true };
    },
  };
}
