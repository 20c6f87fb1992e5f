import { describe, expect, it } from "vitest";
import { createCompactor, type CompactOptions } from "../../src/core/compactor.js";
import { parseConversation } from "../../src/core/formats/parseConversation.js";
import { conversation, reactTurn } from "../helpers/conversations.js";
import { scriptedSummarizer } from "../helpers/scriptedSummarizer.js";

const history = parseConversation(conversation(...Array.from({ length: 8 }, () => reactTurn({ rounds: 4, toolResultChars: 3_000 }))));

function compactor() {
  return createCompactor({ settings: { contextWindow: 100_000, keepRecentTokens: 8_000 }, summarizer: scriptedSummarizer() })!;
}

describe("compact() called from plain JavaScript", () => {
  it("runs a manual compaction when the options are left out", async () => {
    const result = await compactor().compact(history);
    expect(result.reason).toBe("manual");
    expect(result.messagesAfter).toBeLessThan(result.messagesBefore);
  });

  it("names options.reason when it is not a reason, instead of failing inside", async () => {
    const bad = { reason: "because" } as unknown as CompactOptions;
    await expect(compactor().compact(history, bad)).rejects.toThrow(
      'compact: options.reason must be one of threshold, overflow, manual, got "because"',
    );
    await expect(compactor().compact(history, {} as CompactOptions)).rejects.toThrow(/options\.reason must be one of .*, got undefined/);
  });
});
