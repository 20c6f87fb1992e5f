import { describe, expect, it } from "vitest";
import { ARCHIVE_HEADING, buildArchive } from "../../src/core/archive.js";
import { parseConversation } from "../../src/core/formats/parseConversation.js";
import { TokenEstimator } from "../../src/core/tokenEstimator.js";
import { conversation, reactTurn } from "../helpers/conversations.js";

const messages = parseConversation(conversation(...Array.from({ length: 6 }, () => reactTurn({ rounds: 5, toolResultChars: 2_000 })))).messages;

describe("buildArchive", () => {
  it("keeps the newest messages, one clipped line each, within the budget, and counts the rest as omitted", () => {
    const estimator = new TokenEstimator();
    const archive = buildArchive({ messages, omitted: 3, previousSummary: undefined, budgetTokens: 1_500 }, estimator);
    const lines = archive.split("\n");
    expect(lines[0]).toBe(ARCHIVE_HEADING);
    const omitted = Number(/^(\d+) earlier messages omitted\.$/.exec(lines[1]!)![1]);
    expect(omitted + lines.length - 2).toBe(messages.length + 3);
    expect(lines.at(-1)).toContain("Answer");
    expect(lines.every((l) => l.length <= 600)).toBe(true);
    expect(estimator.countText(archive)).toBeLessThanOrEqual(1_500);
  });

  it("appends to the previous summary and merges an earlier archive instead of nesting it", () => {
    const estimator = new TokenEstimator();
    const first = buildArchive({ messages: messages.slice(0, 20), omitted: 0, previousSummary: "## Goal\nship it", budgetTokens: 2_000 }, estimator);
    const second = buildArchive({ messages: messages.slice(20), omitted: 0, previousSummary: first, budgetTokens: 2_000 }, estimator);
    expect(second.startsWith("## Goal\nship it\n\n")).toBe(true);
    expect(second.split(ARCHIVE_HEADING)).toHaveLength(2);
    expect(estimator.countText(second.slice(second.indexOf(ARCHIVE_HEADING)))).toBeLessThanOrEqual(2_000);
  });

  it("never takes more tokens than the messages it replaces", () => {
    const estimator = new TokenEstimator();
    const few = messages.slice(0, 2);
    const replaced = few.reduce((s, m) => s + estimator.count(m), 0);
    const archive = buildArchive({ messages: few, omitted: 0, previousSummary: undefined, budgetTokens: 10_000 }, estimator);
    expect(estimator.countText(archive)).toBeLessThanOrEqual(replaced);
  });
});
