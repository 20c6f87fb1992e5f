import { describe, expect, it } from "vitest";
import { planCut } from "../../src/core/cutPlan.js";
import { parseConversation } from "../../src/core/formats/parseConversation.js";
import { prepare } from "../../src/core/prepare.js";
import { normalizeSettings } from "../../src/core/settings.js";
import { summaryMessage } from "../../src/core/summaryEnvelope.js";
import { TokenEstimator } from "../../src/core/tokenEstimator.js";
import { conversation, reactTurn } from "../helpers/conversations.js";

const settings = normalizeSettings({ contextWindow: 100_000, keepRecentTokens: 8_000 });
const long = () => conversation(...Array.from({ length: 6 }, () => reactTurn({ rounds: 6, toolResultChars: 3_500 })));

describe("planCut", () => {
  it("is the step prepare builds on: the same cut, and null exactly when prepare is", () => {
    for (const messages of [long(), conversation(reactTurn({ rounds: 1, toolResultChars: 100 })), [summaryMessage("earlier"), ...long()]]) {
      const conv = parseConversation(messages);
      const plan = planCut(conv, settings, new TokenEstimator());
      const prep = prepare(conv, settings, new TokenEstimator());
      expect(plan === null).toBe(prep === null);
      if (plan === null || prep === null) continue;
      expect(plan.cut.firstKeptIndex).toBe(prep.firstKeptIndex);
      expect(plan.start).toBe(plan.previousSummary === undefined ? 0 : 1);
    }
  });

  it("is null when what lies outside the budget is smaller than any summary of it: a greeting before a pasted log", () => {
    const log = Array.from({ length: 3_000 }, (_, i) => `2026-12-03T10:${String(i % 60).padStart(2, "0")} worker ${i}: request served in ${i % 97} ms`).join("\n");
    const messages = [
      { role: "user", content: "hi" },
      { role: "assistant", content: "Hello! How can I help?" },
      { role: "user", content: `Why is this slow?\n${log}` },
    ];
    const window = normalizeSettings({ contextWindow: 200_000 });
    // The log alone is over the keep-recent budget, so it is the newest group, kept whatever its size.
    const estimator = new TokenEstimator();
    expect(estimator.count(parseConversation(messages).messages[2]!)).toBeGreaterThan(window.keepRecentTokens);
    expect(planCut(parseConversation(messages), window, new TokenEstimator())).toBeNull();
    // A range that could outweigh a summary is still cut.
    const longer = [{ role: "user", content: "Set up the project. " + "It must build on Node 20 and 22, with strict types. ".repeat(20) }, ...messages.slice(1)];
    expect(planCut(parseConversation(longer), window, new TokenEstimator())?.cut.firstKeptIndex).toBe(2);
  });

  it("hands over counts with which the worker's prepare tokenizes none of the walked messages again", () => {
    const conv = parseConversation(long());
    prepare(conv, settings, new TokenEstimator()); // the prompt's fixed texts are counted once per process
    const decided = new TokenEstimator();
    expect(planCut(conv, settings, decided)).not.toBeNull();
    const known = decided.knownCounts(conv);
    expect(known.messages.length).toBeGreaterThan(0);

    const fresh = new TokenEstimator();
    prepare(conv, settings, fresh);
    const handedOver = new TokenEstimator({ known });
    prepare(conv, settings, handedOver);
    // The message that crossed the budget was counted only until it did: handed over as a lower bound.
    expect(known.atLeast).toHaveLength(1);
    expect(fresh.tokenizedTexts - handedOver.tokenizedTexts).toBe(known.messages.length + 1);
  });
});
