/**
 * The summarizer every scenario uses: the tests' fake Anthropic API (a real
 * HTTP server speaking the Messages API's SSE) reached through the real SDK,
 * so the measured path is the one production runs, minus the model.
 *
 * Two speeds: instant (the whole stream at once; the overhead scenario, where
 * the summarizer must cost nothing so the service's own cost shows) and two
 * seconds (the concurrency scenario: the stream's 21 events 100 ms apart,
 * 15 of them text deltas, like a model writing a short summary, kept on that
 * schedule from the stream's start so the bench process's own lateness does
 * not lengthen the call).
 */
import { startFakeAnthropic, type RecordedRequest, type ReplyOptions } from "../../test/helpers/fakeAnthropic.js";

export const INSTANT: ReplyOptions = {};
export const TWO_SECONDS: ReplyOptions = { chunks: 15, delayMs: 100, onSchedule: true };

/** How many of the first requests' bodies are kept, for replaying them (modelServerCost.ts): a few of each conversation's. */
const KEPT_BODIES = 32;

export interface BenchAnthropic {
  readonly url: string;
  /** Summarization requests answered so far. */
  calls(): number;
  /** The JSON bodies of the first summarization requests answered, written again from their parsed form (the SDK writes them with `JSON.stringify` too). */
  keptBodies(): readonly string[];
  close(): Promise<void>;
}

export async function startBenchAnthropic(reply: ReplyOptions): Promise<BenchAnthropic> {
  let calls = 0;
  const kept: string[] = [];
  const fake = await startFakeAnthropic({
    script: (request) => {
      // The fake records every request with its parsed body (a whole
      // transcript); thousands of them would grow the bench's heap under the
      // measurement. Only the count and a few bodies are needed.
      (fake.requests as RecordedRequest[]).length = 0;
      calls++;
      if (kept.length < KEPT_BODIES) kept.push(JSON.stringify(request.body));
      return { kind: "reply", ...reply };
    },
  });
  return { url: fake.url, calls: () => calls, keptBodies: () => kept, close: () => fake.close() };
}
