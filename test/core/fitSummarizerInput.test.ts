import { describe, expect, it } from "vitest";
import { fitSummarizerInput } from "../../src/core/fitSummarizerInput.js";
import { parseConversation } from "../../src/core/formats/parseConversation.js";
import { TokenEstimator } from "../../src/core/tokenEstimator.js";
import { conversation, reactTurn } from "../helpers/conversations.js";

const estimator = new TokenEstimator();
/** One turn: the user's request, then many rounds of tool calls and results answering it. */
const turn = parseConversation(conversation(reactTurn({ rounds: 20, toolResultChars: 2_000, requestChars: 600 }))).messages;

describe("fitSummarizerInput", () => {
  it("keeps a turn's opening request and leaves out the messages after it when the turn does not fit", () => {
    const fitted = fitSummarizerInput(turn, 5_000, estimator, "afterOpening");
    expect(fitted.omitted).toBeGreaterThan(0);
    expect(fitted.leftOut).toBe("afterOpening");
    expect(fitted.messages[0]).toBe(turn[0]);
    expect(fitted.messages.slice(1)).toEqual(turn.slice(1 + fitted.omitted));
    expect(fitted.messages.at(-1)).toBe(turn.at(-1));
    expect(estimator.countText(fitted.transcript)).toBeLessThanOrEqual(5_000);
  });

  it("leaves out the oldest messages when the range does not open with the request", () => {
    const fitted = fitSummarizerInput(turn, 5_000, estimator, "oldest");
    expect(fitted.leftOut).toBe("oldest");
    expect(fitted.messages).toEqual(turn.slice(fitted.omitted));
  });

  it("leaves out the opening request too when it alone is larger than the budget", () => {
    const fitted = fitSummarizerInput(turn, 60, estimator, "afterOpening");
    expect(fitted.leftOut).toBe("oldest");
    expect(fitted.messages).toEqual(turn.slice(fitted.omitted));
  });

  it("sends the whole range when it fits, whichever way it would leave messages out", () => {
    const fitted = fitSummarizerInput(turn, 100_000, estimator, "afterOpening");
    expect(fitted.omitted).toBe(0);
    expect(fitted.messages).toEqual(turn);
  });
});
