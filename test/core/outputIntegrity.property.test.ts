import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { apply, keptMessages } from "../../src/core/apply.js";
import { createCompactor } from "../../src/core/compactor.js";
import { parseConversation } from "../../src/core/formats/parseConversation.js";
import { prepare } from "../../src/core/prepare.js";
import { normalizeSettings } from "../../src/core/settings.js";
import { summaryMessage } from "../../src/core/summaryEnvelope.js";
import { TokenEstimator } from "../../src/core/tokenEstimator.js";
import { checkToolPairing } from "../../src/core/toolPairing.js";
import { reactConversationArbitrary } from "../helpers/conversations.js";
import { scriptedSummarizer } from "../helpers/scriptedSummarizer.js";

const settingsArbitrary = fc.record({
  contextWindow: fc.integer({ min: 6_000, max: 200_000 }),
  reserveTokens: fc.integer({ min: 1_000, max: 16_384 }),
  keepRecentTokens: fc.integer({ min: 200, max: 20_000 }),
});

const conversations = reactConversationArbitrary({ maxTurns: 4, maxRounds: 40, maxResultChars: 6_000 });

describe("output integrity over generated ReAct conversations", () => {
  it("never returns a tool result without its call or a call without its result", () => {
    fc.assert(
      fc.property(conversations, settingsArbitrary, (generated, settingsInput) => {
        const conv = parseConversation(generated.input, generated.format);
        const settings = normalizeSettings(settingsInput);
        const prep = prepare(conv, settings, new TokenEstimator());
        if (prep === null) return;
        const out = apply(keptMessages(conv.messages, prep), summaryMessage("## Goal\nsummary"));
        const pairing = checkToolPairing(parseConversation(out, generated.format).messages);
        expect(pairing.orphanResults).toEqual([]);
        expect(pairing.unansweredCalls).toEqual([]);
        // The tail is the input's own objects, in order.
        const tail = out.slice(out.length - (conv.messages.length - prep.firstKeptIndex));
        tail.forEach((m, i) => expect(m).toBe(conv.messages[prep.firstKeptIndex + i]!.raw));
      }),
      { numRuns: 2_000 },
    );
  });

  it("keeps the tail within the budget unless the newest group alone exceeds it", () => {
    fc.assert(
      fc.property(conversations, settingsArbitrary, (generated, settingsInput) => {
        const conv = parseConversation(generated.input, generated.format);
        const settings = normalizeSettings(settingsInput);
        const estimator = new TokenEstimator();
        const prep = prepare(conv, settings, estimator);
        if (prep === null) return;
        const tail = conv.messages.slice(prep.firstKeptIndex);
        const tailTokens = tail.reduce((s, m) => s + estimator.count(m), 0);
        if (tailTokens > settings.keepRecentTokens) {
          // Only the newest group may overflow: a single assistant message and its results.
          expect(tail[0]!.kind).toBe("assistant");
          expect(tail.slice(1).every((m) => m.kind === "toolResult")).toBe(true);
        }
        expect(tail[0]!.kind).not.toBe("toolResult");
      }),
      { numRuns: 1_000 },
    );
  });

  it("compacts its own output to nothing, with no further LLM call", async () => {
    await fc.assert(
      fc.asyncProperty(conversations, settingsArbitrary, async (generated, settingsInput) => {
        const summarizer = scriptedSummarizer();
        const compactor = createCompactor({ settings: settingsInput, summarizer })!;
        const conv = parseConversation(generated.input, generated.format);
        let result;
        try {
          result = await compactor.compact(conv, { reason: "manual" });
        } catch (err) {
          expect((err as { code?: string }).code).toBe("nothing_to_compact");
          expect(summarizer.requests).toHaveLength(0);
          return;
        }
        const calls = summarizer.requests.length;
        await expect(compactor.compact(parseConversation(result.messages, generated.format), { reason: "manual" })).rejects.toMatchObject({
          code: "nothing_to_compact",
        });
        expect(summarizer.requests).toHaveLength(calls);
      }),
      { numRuns: 300 },
    );
  });
});
