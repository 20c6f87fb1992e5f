/**
 * What a process keeps of the tokenizer once it has counted: the rank table's
 * typed arrays, not gpt-tokenizer's vocabulary (200,000 strings and the
 * module's source, about 12 MB of heap that every full collection would mark
 * again). Measured from before the counter is loaded to after its first
 * count, in a test file of its own so nothing else has loaded it.
 */
import { describe, expect, it } from "vitest";
import { liveHeapBytes } from "../helpers/liveHeap.js";

const MB = 1024 * 1024;

describe("the token counter, once its table is built", () => {
  it("keeps the table and lets the vocabulary go", async () => {
    const before = liveHeapBytes();
    const { countTextTokens } = await import("../../src/core/tokenCounter.js");
    expect(countTextTokens("The vocabulary is read once → then let go.")).toBeGreaterThan(5);
    const kept = liveHeapBytes() - before;
    // Measured: 5.4 MB (the table's arrays and the counter's code); 17.7 MB
    // when the vocabulary module was imported and stayed loaded.
    expect(kept).toBeLessThan(10 * MB);
  });
});
