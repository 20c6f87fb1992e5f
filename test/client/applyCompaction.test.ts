import { describe, expect, it } from "vitest";
import { applyCompaction, StaleCompactionError } from "../../src/client/applyCompaction.js";
import { replacesOf } from "../../src/core/replaces.js";
import { deeplyNestedJson } from "../helpers/deepJson.js";

const sent = [
  { role: "user", content: "fix the build" },
  { role: "assistant", content: [{ type: "text", text: "reading the log" }] },
  { role: "user", content: "it is the linker" },
];
const summary = { role: "user", content: "<summary>the user wants the build fixed</summary>" };
const result = { messages: [summary, sent[2]!], replaces: replacesOf(sent) };

describe("applyCompaction", () => {
  it("swaps the replaced messages for the result's and keeps what was appended since", () => {
    const appended = { role: "assistant", content: "relinking" };
    expect(applyCompaction([...sent, appended], result)).toEqual([summary, sent[2], appended]);
  });

  it("accepts the same messages written with their keys in another order", () => {
    const reordered = sent.map((message) => ({ content: message.content, role: message.role }));
    expect(applyCompaction(reordered, result)).toEqual([summary, sent[2]]);
  });

  it("reports the expected and actual digests of a changed prefix", () => {
    const edited = [{ role: "user", content: "fix the tests" }, ...sent.slice(1)];
    const error = captured(() => applyCompaction(edited, result));
    expect(error).toBeInstanceOf(StaleCompactionError);
    expect(error).toMatchObject({ count: 3, expectedDigest: result.replaces.digest, actualDigest: replacesOf(edited).digest });
  });

  it("refuses the same result applied a second time, and a result made of another conversation", () => {
    const once = applyCompaction([...sent, { role: "assistant", content: "relinking" }], result);
    expect(captured(() => applyCompaction(once, result))).toBeInstanceOf(StaleCompactionError);
    const other = [{ role: "user", content: "write the docs" }, ...sent.slice(1)];
    expect(captured(() => applyCompaction(other, result))).toBeInstanceOf(StaleCompactionError);
  });

  it("refuses a result that replaces more messages than the conversation now has", () => {
    const error = captured(() => applyCompaction(sent.slice(0, 2), result));
    expect(error).toMatchObject({ name: "StaleCompactionError", count: 3, actualDigest: null });
    expect((error as Error).message).toContain("fewer");
  });

  it("refuses as stale a prefix edited to nest 50,000 levels deep, without overflowing the stack", () => {
    const deep = [{ role: "user", content: [{ type: "text", text: "x", extra: JSON.parse(deeplyNestedJson(50_000)) }] }, ...sent.slice(1)];
    expect(captured(() => applyCompaction(deep, result))).toBeInstanceOf(StaleCompactionError);
  });

  it("names the message that refers to itself, or holds a BigInt, rather than running out of memory or naming nothing", () => {
    const message: { role: string; content: unknown[] } = { role: "user", content: [] };
    message.content.push({ type: "text", text: "see above", parent: message });
    expect(() => applyCompaction([message, ...sent.slice(1)], result)).toThrow(/^messages\[0\]\.content\[0\]\.parent: refers to messages\[0\], which encloses it: a cycle/);
    const counted = [{ role: "user", content: "fix the build", tokens: 4n }, ...sent.slice(1)];
    expect(() => applyCompaction(counted, result)).toThrow(/^messages\[0\]\.tokens: is a BigInt, which JSON cannot carry/);
  });

  it("names the field when handed something that is not a result with a swap contract", () => {
    expect(() => applyCompaction(sent, { messages: [summary] } as never)).toThrow(/^result\.replaces: missing/);
    expect(() => applyCompaction(sent, { messages: [summary], replaces: { count: -1, digest: "x" } })).toThrow(/^result\.replaces\.count/);
    expect(() => applyCompaction(sent, { messages: "no", replaces: result.replaces } as never)).toThrow(/^result\.messages/);
  });
});

function captured(run: () => unknown): unknown {
  try {
    run();
  } catch (err) {
    return err;
  }
  throw new Error("expected an error");
}
