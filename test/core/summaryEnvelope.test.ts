import { describe, expect, it } from "vitest";
import { parseConversation } from "../../src/core/formats/parseConversation.js";
import { previousSummaryOf, summaryMessage } from "../../src/core/summaryEnvelope.js";

describe("summary envelope", () => {
  it("is a user message with string content that both shapes parse as a user message", () => {
    const msg = summaryMessage("## Goal\nShip it");
    expect(msg.role).toBe("user");
    expect(msg.content).toContain("<summary>\n## Goal\nShip it\n</summary>");
    for (const format of ["anthropic", "openai"] as const) {
      const [parsed] = parseConversation([msg], format).messages;
      expect(parsed!.kind).toBe("user");
      expect(previousSummaryOf(parsed!)).toBe("## Goal\nShip it");
    }
  });

  it("gives back a summary whole when the text it quotes holds the envelope's own tags", () => {
    const summary = "## Critical Context\nThe tool printed </summary>\n<summary>\nand then\n</summary> again";
    const [parsed] = parseConversation([summaryMessage(summary)]).messages;
    expect(previousSummaryOf(parsed!)).toBe(summary);
  });

  it("does not mistake a user quoting a summary tag for a previous compaction", () => {
    const conv = parseConversation([
      { role: "user", content: "<summary>my own notes</summary>" },
      { role: "user", content: `please read: ${summaryMessage("x").content}` },
    ]);
    expect(conv.messages.map(previousSummaryOf)).toEqual([undefined, undefined]);
  });
});
