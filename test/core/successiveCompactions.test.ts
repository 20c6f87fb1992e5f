/**
 * Five compactions in a row of one long real session, grown between rounds
 * with the session's next messages, as an agent's context grows: the user's
 * intent and the files it changed must survive every round, and the summary
 * must not grow round after round. Once with the offline summarizer, once
 * with the real Anthropic summarizer against the local stand-in for the API
 * (whose fixed reply paraphrases nothing of the session: what survives there
 * survives because it is carried mechanically).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCompactor, OFFLINE_SUMMARIZER, type Result, type SummarizerChoice } from "../../src/core/compactor.js";
import { collectFileOperations, NO_FILE_OPERATIONS, splitFileOperations } from "../../src/core/fileOperations.js";
import { parseConversation } from "../../src/core/formats/parseConversation.js";
import { userRequestsOf } from "../../src/core/pinnedRequests.js";
import { normalizeSettings, summaryBudget } from "../../src/core/settings.js";
import { TokenEstimator } from "../../src/core/tokenEstimator.js";
import { createAnthropicSummarizer } from "../../src/summarizers/anthropic.js";
import { corpusDir, loadPiSession } from "../helpers/corpus.js";
import { startFakeAnthropic, type FakeAnthropic } from "../helpers/fakeAnthropic.js";

const ROUNDS = 5;
const SETTINGS = normalizeSettings({ contextWindow: 50_000 });
/** The pinned requests' ceiling (pinnedRequests.ts); the rest of the summary is bounded by the summary budget. */
const PINNED_TOKENS = 1_000;
const session = loadPiSession(`${corpusDir}/pi-mono-sessions/large-session.jsonl`).messages;

let fake: FakeAnthropic;
beforeAll(async () => {
  fake = await startFakeAnthropic();
});
afterAll(() => fake.close());

/** Everything the agent still has after a compaction, as searchable text. */
function outputText(result: Result): string {
  const tail = parseConversation(result.messages).messages.slice(1);
  return [result.summary, ...tail.flatMap((m) => m.blocks.map((b) => ("text" in b && b.text !== undefined ? b.text : JSON.stringify(b))))].join("\n");
}

async function compactFiveTimes(summarizer: SummarizerChoice): Promise<void> {
  const compactor = createCompactor({ settings: SETTINGS, summarizer })!;
  const estimator = new TokenEstimator();
  let context: unknown[] = [];
  let consumed = 0;
  for (let round = 1; round <= ROUNDS; round++) {
    const end = Math.ceil((session.length * round) / ROUNDS);
    context = [...context, ...session.slice(consumed, end)];
    consumed = end;
    const result = await compactor.compact(parseConversation(context), { reason: "manual" });
    const output = outputText(result);
    const seen = parseConversation(session.slice(0, consumed)).messages;

    const requests = userRequestsOf(seen).map((r) => r.text);
    expect(output, `round ${round}: the first request`).toContain(requests[0]!.slice(0, 200));
    expect(output, `round ${round}: the newest request`).toContain(requests.at(-1)!.slice(0, 200));
    const missing = requests.filter((text) => !output.includes(text.slice(0, 200))).length;
    const stated = Number(/<user-requests omitted="(\d+)">/.exec(result.summary)?.[1] ?? 0);
    expect(missing, `round ${round}: requests lost without being counted`).toBeLessThanOrEqual(stated);

    for (const path of collectFileOperations(seen, NO_FILE_OPERATIONS).modified) {
      expect(output, `round ${round}: modified path ${path}`).toContain(path);
    }

    const prose = splitFileOperations(result.summary).prose;
    expect(estimator.countText(prose), `round ${round}: summary size`).toBeLessThanOrEqual(summaryBudget(SETTINGS) + PINNED_TOKENS);
    context = result.messages;
  }
}

describe("five successive compactions of a long session", () => {
  it("keep the user's requests and modified paths, in a bounded summary, with the offline summarizer", async () => {
    await compactFiveTimes(OFFLINE_SUMMARIZER);
  }, 120_000);

  it("keep the user's requests and modified paths, in a bounded summary, with an LLM summarizer", async () => {
    const summarizer = createAnthropicSummarizer({ apiKey: "sk-test", baseURL: fake.url, model: "claude-test", maxRetries: 0 });
    await compactFiveTimes(summarizer);
    expect(fake.requests.length).toBeGreaterThanOrEqual(ROUNDS);
  }, 120_000);
});
