/**
 * What a compaction holds while its summarizer calls are in flight (the
 * seconds that make up most of its life, and what a worker with hundreds of
 * jobs in flight pays for each): the prompt it sends, not also the transcript
 * the prompt was built from. Measured on the heap after forced collections,
 * with many compactions waiting on a summarizer that does not answer yet.
 */
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { createCompactor } from "../../src/core/compactor.js";
import { parseConversation } from "../../src/core/formats/parseConversation.js";
import type { SummarizationRequest, Summarizer } from "../../src/core/summarizer.js";
import { conversation, reactTurn } from "../helpers/conversations.js";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

function heapUsed(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

const IN_FLIGHT = 20;

describe("a compaction waiting on its summarizer", () => {
  it("holds its prompt but no longer the transcript it was built from", async () => {
    // A long history (one-byte text, so a character is a byte) and a short current turn.
    const raw = conversation(...Array.from({ length: 12 }, () => reactTurn({ rounds: 4, toolResultChars: 6_000 })), reactTurn({ rounds: 1 }));
    const conversations = Array.from({ length: IN_FLIGHT }, () => parseConversation(structuredClone(raw)));
    let release: () => void = () => undefined;
    const answer = new Promise<void>((resolve) => (release = resolve));
    const requests: SummarizationRequest[] = [];
    const summarizer: Summarizer = {
      name: "waiting",
      async summarize(request) {
        requests.push(request);
        await answer;
        return { text: "## Goal\nthe summary", truncated: false };
      },
    };
    const compactor = createCompactor({ settings: { contextWindow: 200_000, keepRecentTokens: 4_000 }, summarizer })!;

    const before = heapUsed();
    const runs = conversations.map((c) => compactor.compact(c, { reason: "manual" }));
    // Each job asks for its history and, the cut falling inside the last turn, for that turn's head.
    while (requests.length < 2 * IN_FLIGHT) await new Promise((resolve) => setTimeout(resolve, 10));
    const perJob = (heapUsed() - before) / IN_FLIGHT;
    const prompt = requests.reduce((sum, r) => sum + r.prompt.length, 0) / IN_FLIGHT;
    release();
    await Promise.all(runs);

    expect(prompt).toBeGreaterThan(100_000);
    // The transcripts are nearly the whole prompts. Measured: about 2.5
    // prompts' worth per job in flight (the prompts, the estimator's and the
    // plan's bookkeeping); 4.5 while the preparation and its transcripts were
    // still held across the calls.
    expect(perJob).toBeLessThan(prompt * 3);
  }, 120_000);
});
