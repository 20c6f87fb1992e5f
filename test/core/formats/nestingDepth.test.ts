import { describe, expect, it } from "vitest";
import { createCompactor } from "../../../src/core/compactor.js";
import { InvalidConversationError } from "../../../src/core/errors.js";
import { MAX_NESTING_DEPTH, tooDeeplyNested } from "../../../src/core/formats/nestingDepth.js";
import { parseConversation } from "../../../src/core/formats/parseConversation.js";
import { canonicalJson, replacesOf } from "../../../src/core/replaces.js";
import { conversation, reactTurn } from "../../helpers/conversations.js";
import { deeplyNestedJson, toolCallWithInput } from "../../helpers/deepJson.js";
import { scriptedSummarizer } from "../../helpers/scriptedSummarizer.js";

/** A long session followed by one tool call whose input nests `levels` deep, as the parser receives it. */
function sessionWithToolInput(levels: number): { messages: unknown[] } {
  const call = JSON.parse(toolCallWithInput(deeplyNestedJson(levels))) as unknown[];
  return { messages: [...call, ...conversation(...Array.from({ length: 6 }, () => reactTurn({ rounds: 4, toolResultChars: 3_000 })))] };
}

function parseError(input: unknown): InvalidConversationError {
  try {
    parseConversation(input);
  } catch (error) {
    if (error instanceof InvalidConversationError) return error;
    throw error;
  }
  throw new Error("parsed without an error");
}

describe("nesting depth", () => {
  it("refuses a tool input nested 50,000 levels deep, naming the field, without overflowing the stack", () => {
    const error = parseError(sessionWithToolInput(50_000));
    expect(error.field).toBe("messages[1].content[0].input");
    expect(error.message).toContain(`more than ${MAX_NESTING_DEPTH} levels deep`);
  });

  it("refuses OpenAI arguments that parse to 50,000 levels, naming the arguments", () => {
    const error = parseError([
      { role: "user", content: "go" },
      { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: deeplyNestedJson(50_000) } }] },
      { role: "tool", tool_call_id: "c1", content: "ok" },
    ]);
    expect(error.field).toBe("messages[1].tool_calls[0].function.arguments");
  });

  it("accepts nesting at the bound and compacts it like any conversation; one level more is refused", async () => {
    // The envelope, messages, the message, content and the block sit above the input: five levels.
    const atBound = sessionWithToolInput(MAX_NESTING_DEPTH - 5);
    expect(tooDeeplyNested(atBound, "")).toBeUndefined();
    expect(parseError(sessionWithToolInput(MAX_NESTING_DEPTH - 4)).field).toBe("messages[1].content[0].input");

    const compactor = createCompactor({ settings: { contextWindow: 40_000, keepRecentTokens: 4_000 }, summarizer: scriptedSummarizer() })!;
    const result = await compactor.compact(parseConversation(atBound), { reason: "manual" });
    expect(result.messages.length).toBeLessThan(atBound.messages.length);
    expect(replacesOf(atBound.messages).count).toBe(atBound.messages.length);
  });

  it("writes canonical JSON of any depth: an agent digests its own messages, however deep", () => {
    const levels = 50_000;
    expect(canonicalJson(JSON.parse(deeplyNestedJson(levels)))).toBe(deeplyNestedJson(levels));
  });
});
