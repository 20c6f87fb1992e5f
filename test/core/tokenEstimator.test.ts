import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseConversation } from "../../src/core/formats/parseConversation.js";
import { IMAGE_TOKENS, MESSAGE_OVERHEAD_TOKENS, TokenEstimator } from "../../src/core/tokenEstimator.js";

describe("TokenEstimator", () => {
  it("counts a message's text plus a fixed overhead, and an image at its fixed price", () => {
    const [text, image] = parseConversation([
      { role: "user", content: "hello world" },
      { role: "user", content: [{ type: "image", source: { type: "base64", media_type: "image/png", data: "A".repeat(100_000) } }] },
    ]).messages;
    const estimator = new TokenEstimator();
    expect(estimator.count(text!)).toBe(MESSAGE_OVERHEAD_TOKENS + 2);
    expect(estimator.count(image!)).toBe(MESSAGE_OVERHEAD_TOKENS + IMAGE_TOKENS);
  });

  it("tokenizes each message once however often it is counted", () => {
    const [message] = parseConversation([{ role: "user", content: "count me once" }]).messages;
    const estimator = new TokenEstimator();
    for (let i = 0; i < 5; i++) estimator.count(message!);
    estimator.estimate(message!);
    expect(estimator.tokenizedTexts).toBe(1);
  });

  it("treats special-token strings in content as plain text", () => {
    const [message] = parseConversation([{ role: "user", content: "<|endoftext|> is just text" }]).messages;
    expect(new TokenEstimator().count(message!)).toBeGreaterThan(MESSAGE_OVERHEAD_TOKENS + 3);
  });

  it("never counts more tokens than the byte-length bound it answers 'fits' with", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme", maxLength: 400 }), fc.string({ unit: "binary", maxLength: 400 }), (a, b) => {
        const [message] = parseConversation([{ role: "user", content: [{ type: "text", text: a }, { type: "text", text: b }] }]).messages;
        const fresh = new TokenEstimator();
        const bound = fresh.upperBound(message!);
        expect(new TokenEstimator().count(message!)).toBeLessThanOrEqual(bound);
      }),
      { numRuns: 500 },
    );
  });

  it("prices uncounted messages by the ratio calibrated on them, without tokenizing them", () => {
    const prose = "The quick brown fox jumps over the lazy dog near the river bank. ".repeat(200);
    const conv = parseConversation(Array.from({ length: 40 }, (_, i) => ({ role: i % 2 ? "assistant" : "user", content: `${i} ${prose}` })));
    const estimator = new TokenEstimator();
    estimator.calibrate(conv.messages);
    const sampled = estimator.tokenizedTexts;
    const exact = new TokenEstimator();
    for (const m of conv.messages) {
      expect(Math.abs(estimator.estimate(m) - exact.count(m)) / exact.count(m)).toBeLessThan(0.03);
    }
    expect(estimator.tokenizedTexts).toBe(sampled);
    expect(conv.messages.some((m) => estimator.isCounted(m))).toBe(false);
  });

  it("scales every count so the conversation totals the provider's reported usage", () => {
    const conv = parseConversation({ system: "Be brief.", messages: [{ role: "user", content: "a".repeat(400) }, { role: "assistant", content: "b ".repeat(300) }] });
    const plain = new TokenEstimator();
    const total = plain.systemTokens(conv) + conv.messages.reduce((s, m) => s + plain.count(m), 0);
    const scaled = new TokenEstimator({ usageTokens: total * 2 });
    scaled.calibrate(conv.messages);
    scaled.applyUsage(conv);
    expect(scaled.systemTokens(conv) + scaled.sumEstimates(conv.messages)).toBeCloseTo(total * 2, 6);
    expect(scaled.count(conv.messages[0]!)).toBeCloseTo(plain.count(conv.messages[0]!) * 2, 6);
  });
});
