import { describe, expect, it } from "vitest";
import { intake, parseRequestConversation } from "../../src/api/compactionIntake.js";
import type { BatchItemRequest } from "../../src/api/requestSchemas.js";
import { createCompactor } from "../../src/core/compactor.js";
import { decodePayload } from "../../src/queue/payloadCodec.js";
import { conversation, reactTurn } from "../helpers/conversations.js";
import { scriptedSummarizer } from "../helpers/scriptedSummarizer.js";

describe("intake", () => {
  it("hands the worker the token counts it made deciding, and they give the worker the same cut", async () => {
    const messages = conversation(...Array.from({ length: 6 }, () => reactTurn({ rounds: 6, toolResultChars: 3_500 })));
    const request = { messages, contextWindow: 100_000, settings: { keepRecentTokens: 8_000 }, reason: "threshold", format: "auto" } as unknown as BatchItemRequest;
    const decided = await intake(request, parseRequestConversation(request, ""), { tenant: "acme", fieldPrefix: "", requestDigest: "" });
    if (decided.kind !== "job") throw new Error("expected a job");
    const counts = decided.data.tokenCounts!;
    // The tail walk counted the newest messages exactly.
    expect(counts.messages.map(([index]) => index)).toContain(messages.length - 1);

    const payload = (await decodePayload(decided.data.payload)) as { messages: unknown[] };
    const compactor = createCompactor({ settings: { contextWindow: 100_000, keepRecentTokens: 8_000 }, summarizer: scriptedSummarizer() })!;
    const conv = parseRequestConversation({ ...request, messages: payload.messages } as BatchItemRequest, "");
    const withCounts = await compactor.compact(conv, { reason: "threshold", knownCounts: counts });
    const fresh = await compactor.compact(conv, { reason: "threshold" });
    expect(withCounts.firstKeptIndex).toBe(fresh.firstKeptIndex);
    expect(withCounts.tokensBefore).toBe(fresh.tokensBefore);
  });
});
