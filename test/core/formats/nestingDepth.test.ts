import fc from "fast-check";
import secureJsonParse from "secure-json-parse";
import { describe, expect, it } from "vitest";
import { createCompactor } from "../../../src/core/compactor.js";
import { InvalidConversationError } from "../../../src/core/errors.js";
import { MAX_NESTING_DEPTH, refusedRequestField, tooDeeplyNested } from "../../../src/core/formats/nestingDepth.js";
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

  it("says a conversation that refers to itself is a cycle, naming where it closes, not that it nests too deep", () => {
    const message: { role: string; content: unknown[] } = { role: "user", content: [] };
    message.content.push({ type: "text", text: "see above", parent: message });
    const error = parseError([message]);
    expect(error.field).toBe("messages[0].content[0].parent");
    expect(error.message).toContain("refers to messages[0], which encloses it: a cycle");
    expect(tooDeeplyNested({ messages: [message] }, "body")).toEqual({ field: "body.messages[0].content[0].parent", problem: expect.stringContaining("a cycle") });
  });

  it("writes canonical JSON of any depth: an agent digests its own messages, however deep", () => {
    const levels = 50_000;
    expect(canonicalJson(JSON.parse(deeplyNestedJson(levels)))).toBe(deeplyNestedJson(levels));
  });
});

/** JSON text of small values whose members are often named `__proto__`, `constructor` or `prototype`. */
const suspectJson = fc.letrec<{ value: string; leaf: string; array: string; object: string }>((tie) => ({
  value: fc.oneof({ depthSize: "small" }, tie("leaf"), tie("array"), tie("object")),
  leaf: fc.constantFrom("1", '"s"', "null", "true"),
  array: fc.array(tie("value"), { maxLength: 3 }).map((items) => `[${items.join(",")}]`),
  object: fc
    .array(fc.tuple(fc.constantFrom("__proto__", "constructor", "prototype", "name"), tie("value")), { maxLength: 3 })
    .map((members) => `{${members.map(([key, value]) => `${JSON.stringify(key)}:${value}`).join(",")}}`),
})).value;

function refusedBySecureJsonParse(text: string): boolean {
  try {
    secureJsonParse.parse(text, undefined, { protoAction: "error", constructorAction: "error" });
    return false;
  } catch {
    return true;
  }
}

describe("keys that poison prototypes, in a request body", () => {
  it("are refused exactly where secure-json-parse, which the API parsed with before, refuses them", () => {
    fc.assert(
      fc.property(suspectJson, (text) => {
        expect(refusedRequestField(JSON.parse(text), "") !== undefined).toBe(refusedBySecureJsonParse(text));
      }),
      { numRuns: 2_000 },
    );
  });

  it("are named by their path, down to the levels a path names", () => {
    expect(refusedRequestField(JSON.parse('{"a": [{"b": 1}, {"__proto__": {}}]}'), "")).toEqual({
      field: "a[1].__proto__",
      problem: expect.stringContaining("prototype"),
    });
    expect(refusedRequestField(JSON.parse('{"input": {"constructor": {"prototype": {}}}}'), "body")?.field).toBe("body.input.constructor");
    const deep = JSON.parse('{"a": {"b": {"c": {"d": {"e": {"f": {"g": {"__proto__": 1}}}}}}}}');
    expect(refusedRequestField(deep, "")?.field).toBe("a.b.c.d.e.__proto__");
  });

  it("are not looked for by the nesting check alone, which conversations from files get", () => {
    const poisoned = JSON.parse('{"messages": [], "__proto__": {"x": 1}}');
    expect(tooDeeplyNested(poisoned, "")).toBeUndefined();
    expect(refusedRequestField(JSON.parse(deeplyNestedJson(50_000)), "body")).toEqual({ field: "body.a[0].a[0].a", problem: expect.stringContaining("levels deep") });
  });
});
