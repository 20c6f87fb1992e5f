/**
 * What a compaction holds while its summarizer calls are in flight (the
 * seconds that make up most of its life, and what a worker with hundreds of
 * jobs in flight pays for each): the prompt it sends, not also the transcript
 * the prompt was built from, and, compacting from a source it can read again
 * (as the worker does, from the job's compressed payload), none of the parsed
 * conversation. Measured on the heap after forced collections, with many
 * compactions waiting on a summarizer that does not answer yet, and with weak
 * references to the parsed objects.
 */
import { describe, expect, it } from "vitest";
import { createCompactor, OFFLINE_SUMMARIZER, type Compactor, type ConversationSource, type Result, type SummarizerChoice } from "../../src/core/compactor.js";
import { parseConversation } from "../../src/core/formats/parseConversation.js";
import type { Conversation } from "../../src/core/message.js";
import type { SummarizationRequest, Summarizer } from "../../src/core/summarizer.js";
import { conversation, reactTurn } from "../helpers/conversations.js";
import { scriptedSummarizer } from "../helpers/scriptedSummarizer.js";
import { liveHeapBytes } from "../helpers/liveHeap.js";

const IN_FLIGHT = 20;

const SETTINGS = { contextWindow: 200_000, keepRecentTokens: 4_000 };

/** A long history (one-byte text, so a character is a byte) and a short current turn. */
function longSession(): unknown[] {
  return conversation(...Array.from({ length: 12 }, () => reactTurn({ rounds: 4, toolResultChars: 6_000 })), reactTurn({ rounds: 1 }));
}

/** A summarizer that answers every call once `release` is called. */
function waitingSummarizer(): { summarizer: Summarizer; requests: SummarizationRequest[]; release: () => void } {
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
  return { summarizer, requests, release };
}

/**
 * Starts IN_FLIGHT compactions on a summarizer that does not answer yet and,
 * once each has asked for its history and (the cut falling inside the last
 * turn) for that turn's head, measures the heap they hold: per job, and per
 * job's prompts. `whileWaiting` runs then too; the summarizer answers after.
 */
async function measureWhileWaiting(
  start: (compactor: Compactor) => Promise<Result>[],
  whileWaiting: () => void = () => undefined,
): Promise<{ perJob: number; prompt: number; results: Result[] }> {
  const { summarizer, requests, release } = waitingSummarizer();
  const compactor = createCompactor({ settings: SETTINGS, summarizer })!;
  // One compaction first, so that tables built on first use (the token counter's) are not counted.
  await createCompactor({ settings: SETTINGS, summarizer: OFFLINE_SUMMARIZER })!.compact(parseConversation(longSession()), { reason: "manual" });
  const before = liveHeapBytes();
  const runs = start(compactor);
  while (requests.length < 2 * IN_FLIGHT) await new Promise((resolve) => setTimeout(resolve, 10));
  const perJob = (liveHeapBytes() - before) / IN_FLIGHT;
  const prompt = requests.reduce((sum, r) => sum + r.prompt.length, 0) / IN_FLIGHT;
  whileWaiting();
  release();
  return { perJob, prompt, results: await Promise.all(runs) };
}

/** A source parsing `json` on each read, as the worker decodes its payload; counts its reads. */
function jsonSource(json: string, onRead: (conversation: Conversation) => void = () => undefined): ConversationSource & { reads: number } {
  return {
    reads: 0,
    read() {
      this.reads++;
      const parsed = parseConversation(JSON.parse(json) as unknown[]);
      onRead(parsed);
      return parsed;
    },
  };
}

describe("a compaction waiting on its summarizer", () => {
  it("holds its prompt but no longer the transcript it was built from", async () => {
    const conversations = Array.from({ length: IN_FLIGHT }, () => parseConversation(longSession()));
    const { perJob, prompt } = await measureWhileWaiting((compactor) => conversations.map((c) => compactor.compact(c, { reason: "manual" })));

    expect(prompt).toBeGreaterThan(100_000);
    // The transcripts are nearly the whole prompts. Measured: about 2.1
    // prompts' worth per job in flight (the prompts, the estimator's and the
    // plan's bookkeeping); 4.5 while the preparation and its transcripts were
    // still held across the calls.
    expect(perJob).toBeLessThan(prompt * 3);
  }, 120_000);
});

describe("a compaction from a source, waiting on its summarizer", () => {
  it("holds none of the parsed conversation, and reads it once", async () => {
    const json = JSON.stringify(longSession());
    // Weak references to what each read parsed: the conversation, and a
    // summarized message with its parsed object. None may be reachable from
    // a compaction that is only waiting.
    const parsed: WeakRef<object>[] = [];
    const sources = Array.from({ length: IN_FLIGHT }, () =>
      jsonSource(json, (c) => parsed.push(new WeakRef(c), new WeakRef(c.messages[1]!), new WeakRef(c.messages[1]!.raw as object))),
    );
    let reachable = -1;
    const { perJob, prompt, results } = await measureWhileWaiting(
      (compactor) => sources.map((source) => compactor.compactFrom(source, { reason: "manual" })),
      () => (reachable = parsed.filter((ref) => ref.deref() !== undefined).length),
    );

    expect(parsed).toHaveLength(3 * IN_FLIGHT);
    expect(reachable).toBe(0);
    expect(sources.map((s) => s.reads)).toEqual(sources.map(() => 1));
    expect(results.every((r) => !r.degraded)).toBe(true);
    // Measured: about 2.2 prompts' worth per job in flight (the prompts,
    // two bytes a character since the transcript's clip marks are not
    // Latin-1, the kept messages, the bookkeeping); 4.9 while the parsed
    // conversation (its JSON is about 2 prompts) was held across the calls.
    expect(perJob).toBeLessThan(prompt * 3);
  }, 120_000);

  it("reads it again for the offline summary when the summarizer fails, and returns what compacting the conversation returns", async () => {
    const json = JSON.stringify(longSession());
    const failing = (): SummarizerChoice => scriptedSummarizer(() => ({ kind: "fail", error: new Error("the summarizer is down") }));
    const source = jsonSource(json);
    const fromSource = await createCompactor({ settings: SETTINGS, summarizer: failing() })!.compactFrom(source, { reason: "manual" });
    const inHand = await createCompactor({ settings: SETTINGS, summarizer: failing() })!.compact(parseConversation(JSON.parse(json) as unknown[]), { reason: "manual" });

    expect(fromSource.degraded).toBe(true);
    expect(source.reads).toBe(2);
    expect(fromSource).toEqual(inHand);
  });

  it("reads it once when the offline summarizer is the chosen one", async () => {
    const json = JSON.stringify(longSession());
    const source = jsonSource(json);
    const fromSource = await createCompactor({ settings: SETTINGS, summarizer: OFFLINE_SUMMARIZER })!.compactFrom(source, { reason: "manual" });
    const inHand = await createCompactor({ settings: SETTINGS, summarizer: OFFLINE_SUMMARIZER })!.compact(parseConversation(JSON.parse(json) as unknown[]), { reason: "manual" });

    expect(source.reads).toBe(1);
    expect(fromSource).toEqual(inHand);
  });
});

