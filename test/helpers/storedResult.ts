/** A result as a worker stores it, for tests of what reads and carries stored results. */
import type { StoredResult } from "../../src/queue/resultStore.js";

/** A completed compaction's stored result; `overrides` set the fields a test cares about. */
export function storedResult(overrides: Partial<StoredResult> = {}): StoredResult {
  return {
    messages: [{ role: "assistant", content: "kept" }],
    summary: "the summary",
    reason: "manual",
    tokensBefore: 1000,
    tokensAfter: 100,
    messagesBefore: 10,
    messagesAfter: 2,
    degraded: false,
    degradation: [],
    degradedReason: null,
    summarizer: "anthropic",
    splitTurn: false,
    checkpoint: null,
    omitted: 0,
    firstKeptIndex: 9,
    previousSummaryCharsCut: 0,
    stillAboveThreshold: false,
    replaces: { count: 10, digest: "0".repeat(64) },
    ...overrides,
  };
}
