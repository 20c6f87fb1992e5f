import { describe, expect, it, vi } from "vitest";
import { intake } from "../../src/api/compactionIntake.js";
import { CanonicalMessages } from "../../src/api/requestDigest.js";
import type { BatchItemRequest } from "../../src/api/requestSchemas.js";
import { createCompactor } from "../../src/core/compactor.js";
import { parseConversation } from "../../src/core/formats/parseConversation.js";
import * as preparation from "../../src/core/prepare.js";
import { decodePayload } from "../../src/queue/payloadCodec.js";
import { conversation, reactTurn } from "../helpers/conversations.js";
import { scriptedSummarizer } from "../helpers/scriptedSummarizer.js";

// The real `prepare`, observed: the API must decide with the cut plan alone.
vi.mock("../../src/core/prepare.js", async (importOriginal) => {
  const real = await importOriginal<typeof import("../../src/core/prepare.js")>();
  return { ...real, prepare: vi.fn(real.prepare) };
});

const context = { tenant: "acme", fieldPrefix: "", requestDigest: "" };

describe("intake", () => {
  it("decides with the cut plan alone, and hands the worker counts that give it the same cut", async () => {
    const messages = conversation(...Array.from({ length: 6 }, () => reactTurn({ rounds: 6, toolResultChars: 3_500 })));
    const request = { messages, contextWindow: 100_000, settings: { keepRecentTokens: 8_000 }, reason: "threshold", format: "auto" } as unknown as BatchItemRequest;
    const prepare = vi.mocked(preparation.prepare);
    prepare.mockClear();
    const decided = intake(request, { ...context, canonical: new CanonicalMessages() });
    expect(prepare).not.toHaveBeenCalled();
    if (decided.kind !== "job") throw new Error("expected a job");
    const counts = decided.data.tokenCounts!;
    // The tail walk counted the newest messages exactly.
    expect(counts.messages.map(([index]) => index)).toContain(messages.length - 1);

    const payload = decodePayload(decided.payload) as { messages: unknown[] };
    const compactor = createCompactor({ settings: { contextWindow: 100_000, keepRecentTokens: 8_000 }, summarizer: scriptedSummarizer() })!;
    const conv = parseConversation({ messages: payload.messages });
    const withCounts = await compactor.compact(conv, { reason: "threshold", knownCounts: counts });
    const fresh = await compactor.compact(conv, { reason: "threshold" });
    expect(withCounts.firstKeptIndex).toBe(fresh.firstKeptIndex);
    expect(withCounts.tokensBefore).toBe(fresh.tokensBefore);
    expect(withCounts.messages).toEqual(fresh.messages);
  });

  it("answers nothing to compact without preparing a summary", async () => {
    const request = { messages: conversation(reactTurn({ rounds: 1, toolResultChars: 100 })), contextWindow: 100_000, reason: "manual", format: "auto" } as unknown as BatchItemRequest;
    const prepare = vi.mocked(preparation.prepare);
    prepare.mockClear();
    expect(intake(request, { ...context, canonical: new CanonicalMessages() })).toEqual({ kind: "nothing_to_compact", stillAboveThreshold: false });
    expect(prepare).not.toHaveBeenCalled();
  });

  it("returns a refusal naming the field rather than throwing it, so a replay can be answered first", async () => {
    const request = { messages: [{ role: "user", content: 7 }], contextWindow: 100_000, reason: "manual", format: "auto" } as unknown as BatchItemRequest;
    const decided = intake(request, { ...context, fieldPrefix: "items[2].", canonical: new CanonicalMessages() });
    if (decided.kind !== "refused") throw new Error("expected a refusal");
    expect(decided.error.statusCode).toBe(400);
    expect(decided.error.field).toMatch(/^items\[2\]\.messages\[0\]\.content/);
  });

  it("queues the request's own conversation: its messages, format and system prompt", async () => {
    const messages = conversation(...Array.from({ length: 6 }, () => reactTurn({ rounds: 6, toolResultChars: 3_500 })));
    const system = [{ type: "text", text: "You are a careful agent.", cache_control: { type: "ephemeral" } }];
    const canonical = new CanonicalMessages();
    for (const [format, withSystem] of [["auto", true], [undefined, false]] as const) {
      const request = { messages, contextWindow: 100_000, settings: { keepRecentTokens: 8_000 }, reason: "manual", format, ...(withSystem && { system }) } as unknown as BatchItemRequest;
      const decided = intake(request, { ...context, canonical });
      if (decided.kind !== "job") throw new Error("expected a job");
      expect(decodePayload(decided.payload)).toEqual({ messages, ...(format !== undefined && { format }), ...(withSystem && { system }) });
    }
  });
});

