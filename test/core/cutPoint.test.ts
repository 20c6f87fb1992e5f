import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { findCutPoint } from "../../src/core/cutPoint.js";
import { parseConversation } from "../../src/core/formats/parseConversation.js";
import { TokenEstimator } from "../../src/core/tokenEstimator.js";
import { conversation, reactConversationArbitrary, reactTurn } from "../helpers/conversations.js";

function cut(raw: unknown[], budget: number, start = 0) {
  const conv = parseConversation(raw);
  const estimator = new TokenEstimator();
  const point = findCutPoint(conv.messages, start, budget, estimator);
  const tail = conv.messages.slice(point.firstKeptIndex);
  const tailTokens = tail.reduce((sum, m) => sum + estimator.count(m), 0);
  return { conv, point, tail, tailTokens, estimator };
}

describe("findCutPoint", () => {
  it("treats the budget as a ceiling: the kept tail never exceeds it", () => {
    const raw = conversation(reactTurn({ rounds: 8, toolResultChars: 1_500 }), reactTurn({ rounds: 8, toolResultChars: 1_500 }));
    for (const budget of [500, 1_000, 2_500, 5_000]) {
      const { point, tailTokens } = cut(raw, budget);
      expect(point.firstKeptIndex).toBeGreaterThan(0);
      expect(tailTokens).toBeLessThanOrEqual(budget);
      expect(point.keptTokens).toBe(tailTokens);
    }
  });

  it("keeps the tail within the budget even when single tool results are large", () => {
    const raw = conversation(reactTurn({ rounds: 6, toolResultChars: 30_000 }), reactTurn({ rounds: 6, toolResultChars: 30_000 }));
    const { tailTokens, point } = cut(raw, 20_000);
    expect(point.firstKeptIndex).toBeGreaterThan(0);
    expect(tailTokens).toBeLessThanOrEqual(20_000);
  });

  it("never begins the kept tail with a tool result, for 4 to 40 rounds", () => {
    for (let rounds = 4; rounds <= 40; rounds++) {
      for (const format of ["anthropic", "openai"] as const) {
        for (const budget of [300, 700, 1_500, 3_000]) {
          const { tail, point } = cut(reactTurn({ format, rounds, toolResultChars: 900 }), budget);
          if (point.firstKeptIndex === 0) continue;
          expect(tail[0]!.kind).not.toBe("toolResult");
        }
      }
    }
  });

  it("keeps the newest tool call and its results even when they alone exceed the budget", () => {
    const raw = conversation(reactTurn({ rounds: 3 }), reactTurn({ rounds: 1, toolResultChars: 40_000, endsWith: "toolResults" }));
    const { point, tail, tailTokens } = cut(raw, 2_000);
    expect(tail.map((m) => m.kind)).toEqual(["assistant", "toolResult"]);
    expect(tailTokens).toBeGreaterThan(2_000);
    expect(point.isSplitTurn).toBe(true);
  });

  it("splits a single turn too large for the budget instead of exempting it", () => {
    const { point, conv } = cut(reactTurn({ rounds: 40, toolResultChars: 2_000 }), 5_000);
    expect(point.firstKeptIndex).toBeGreaterThan(1);
    expect(point.isSplitTurn).toBe(true);
    expect(point.turnStartIndex).toBe(0);
    expect(conv.messages[point.turnStartIndex]!.kind).toBe("user");
  });

  it("reports no split when the cut lands on a user message", () => {
    const turns = [reactTurn({ rounds: 2, toolResultChars: 200 }), reactTurn({ rounds: 2, toolResultChars: 200 })];
    const raw = conversation(...turns);
    const conv = parseConversation(raw);
    const estimator = new TokenEstimator();
    const secondTurn = conv.messages.slice(turns[0]!.length);
    const secondTurnTokens = secondTurn.reduce((s, m) => s + estimator.count(m), 0);
    const point = findCutPoint(conv.messages, 0, secondTurnTokens, estimator);
    expect(point).toMatchObject({ firstKeptIndex: turns[0]!.length, turnStartIndex: -1, isSplitTurn: false });
  });

  it("cuts nothing when everything from the start fits", () => {
    const { point } = cut(reactTurn({ rounds: 2 }), 1_000_000);
    expect(point).toMatchObject({ firstKeptIndex: 0, isSplitTurn: false });
  });

  it("never cuts between a tool call and a result that something else separates from it", () => {
    const raw = [
      { role: "user", content: "go" },
      { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: "{}" } }] },
      { role: "system", content: "a reminder injected between the call and its result ".repeat(40) },
      { role: "tool", tool_call_id: "c1", content: "result ".repeat(50) },
      { role: "assistant", content: "done ".repeat(10) },
    ];
    const { conv } = cut(raw, 10_000);
    const estimator = new TokenEstimator();
    // A budget that fits exactly the tool result and the answer plus the system message.
    const budget = [2, 3, 4].reduce((s, i) => s + estimator.count(conv.messages[i]!), 0);
    const point = findCutPoint(conv.messages, 0, budget, estimator);
    expect(point.firstKeptIndex).not.toBe(2);
    expect(point.firstKeptIndex).not.toBe(3);
  });

  it("tokenizes only the messages the backward walk visits", () => {
    const raw = conversation(...Array.from({ length: 30 }, () => reactTurn({ rounds: 5, toolResultChars: 2_000 })));
    const conv = parseConversation(raw);
    const estimator = new TokenEstimator();
    findCutPoint(conv.messages, 0, 3_000, estimator);
    const counted = conv.messages.filter((m) => estimator.isCounted(m)).length;
    expect(counted).toBeLessThan(20);
    expect(estimator.isCounted(conv.messages[0]!)).toBe(false);
  });
});

describe("findCutPoint keeps the largest suffix that fits", () => {
  it("starts the tail where one more group would cross the budget, for any conversation and budget", () => {
    fc.assert(
      fc.property(reactConversationArbitrary({ maxTurns: 4, maxRounds: 12, maxResultChars: 8_000 }), fc.integer({ min: 50, max: 12_000 }), (generated, budget) => {
        const conv = parseConversation(generated.input, generated.format);
        const point = findCutPoint(conv.messages, 0, budget, new TokenEstimator());
        const exact = new TokenEstimator();
        const suffix = (from: number) => conv.messages.slice(from).reduce((sum, m) => sum + exact.count(m), 0);
        // Every call here is answered in the message after it: the tail may begin at any message but a tool result.
        const starts = conv.messages.flatMap((m, i) => (m.kind === "toolResult" ? [] : [i]));
        const k = point.firstKeptIndex;
        if (k === 0) {
          expect(suffix(0)).toBeLessThanOrEqual(budget);
          return;
        }
        expect(starts).toContain(k);
        expect(point.keptTokens).toBe(suffix(k));
        if (suffix(k) > budget) {
          // Over the ceiling only as the newest group, which is kept whatever its size.
          expect(k).toBe(starts.at(-1));
          return;
        }
        // A ceiling, and the largest tail under it: the next group back would cross it.
        const previousStart = starts.filter((i) => i < k).at(-1)!;
        expect(suffix(previousStart)).toBeGreaterThan(budget);
      }),
      { numRuns: 300 },
    );
  });
});

describe("findCutPoint and the message that crosses the budget", () => {
  it("tokenizes that message only until it passes the budget, and cuts where full counts cut", () => {
    // The newest turn's large result crosses the budget: 60,000 characters, some 13,000 tokens.
    const raw = conversation(reactTurn({ rounds: 4, toolResultChars: 2_000 }), reactTurn({ rounds: 1, toolResultChars: 60_000 }), reactTurn({ rounds: 2, toolResultChars: 2_000 }));
    const conv = parseConversation(raw);
    const walked = new TokenEstimator();
    const point = findCutPoint(conv.messages, 0, 3_000, walked);
    const crossing = conv.messages[point.firstKeptIndex - 1]!;
    expect(walked.isCounted(crossing)).toBe(false);
    expect(walked.knownCounts(conv).atLeast).toEqual([[crossing.index, expect.any(Number)]]);
    const [, atLeast] = walked.knownCounts(conv).atLeast![0]!;
    const full = new TokenEstimator().count(crossing);
    expect(atLeast).toBeGreaterThan(3_000 - point.keptTokens);
    expect(atLeast).toBeLessThan(full / 2);

    const fullyCounted = new TokenEstimator();
    for (const message of conv.messages) fullyCounted.count(message);
    expect(findCutPoint(conv.messages, 0, 3_000, fullyCounted)).toEqual(point);
  });

  it("cuts where full counts cut, for any budget", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 12 }), fc.integer({ min: 100, max: 30_000 }), fc.integer({ min: 50, max: 20_000 }), (turns, resultChars, budget) => {
        const raw = conversation(...Array.from({ length: turns }, (_, i) => reactTurn({ rounds: 1 + (i % 3), toolResultChars: i % 2 === 0 ? resultChars : 500 })));
        const conv = parseConversation(raw);
        const fullyCounted = new TokenEstimator();
        for (const message of conv.messages) fullyCounted.count(message);
        expect(findCutPoint(conv.messages, 0, budget, new TokenEstimator())).toEqual(findCutPoint(conv.messages, 0, budget, fullyCounted));
      }),
      { numRuns: 60 },
    );
  });

  it("passes it without tokenizing when the lower bound handed over from the first step already does", () => {
    const raw = conversation(reactTurn({ rounds: 1, toolResultChars: 60_000 }), reactTurn({ rounds: 2, toolResultChars: 2_000 }));
    const first = new TokenEstimator();
    const conv = parseConversation(raw);
    const point = findCutPoint(conv.messages, 0, 3_000, first);
    const second = new TokenEstimator({ known: first.knownCounts(conv) });
    const again = parseConversation(JSON.parse(JSON.stringify(raw)));
    expect(findCutPoint(again.messages, 0, 3_000, second)).toEqual(point);
    expect(second.tokenizedTexts).toBe(0);
  });
});

describe("findCutPoint with reused tool call ids", () => {
  it("matches each result to the earliest unanswered call with its id, so later cuts stay possible", () => {
    const call = (id: string) => ({ role: "assistant", content: null, tool_calls: [{ id, type: "function", function: { name: "think", arguments: "{}" } }] });
    const result = (id: string) => ({ role: "tool", tool_call_id: id, content: "ok" });
    const raw = [
      { role: "user", content: "plan ".repeat(400) },
      call("same"),
      result("same"),
      { role: "assistant", content: "first answer ".repeat(200) },
      call("same"),
      result("same"),
      { role: "assistant", content: "second answer" },
    ];
    const conv = parseConversation(raw);
    const estimator = new TokenEstimator();
    const budget = [4, 5, 6].reduce((s, i) => s + estimator.count(conv.messages[i]!), 0);
    expect(findCutPoint(conv.messages, 0, budget, estimator).firstKeptIndex).toBe(4);
  });
});
