/**
 * The summarizer every scenario uses: the tests' fake Anthropic API (a real
 * HTTP server speaking the Messages API's SSE) reached through the real SDK,
 * so the measured path is the one production runs, minus the model.
 *
 * Two speeds: instant (the whole stream at once; the overhead scenario, where
 * the summarizer must cost nothing so the service's own cost shows) and two
 * seconds (the concurrency scenario: 15 text deltas with 20 pauses of 100 ms
 * between the stream's 21 events, like a model writing a short summary).
 */
import { startFakeAnthropic, type RecordedRequest, type ReplyOptions } from "../../test/helpers/fakeAnthropic.js";

export const INSTANT: ReplyOptions = {};
export const TWO_SECONDS: ReplyOptions = { chunks: 15, delayMs: 100 };

export interface BenchAnthropic {
  readonly url: string;
  /** Summarization requests answered so far. */
  calls(): number;
  close(): Promise<void>;
}

export async function startBenchAnthropic(reply: ReplyOptions): Promise<BenchAnthropic> {
  let calls = 0;
  const fake = await startFakeAnthropic({
    script: () => {
      // The fake records every request with its parsed body (a whole
      // transcript); thousands of them would grow the bench's heap under the
      // measurement. Only the count is needed.
      (fake.requests as RecordedRequest[]).length = 0;
      calls++;
      return { kind: "reply", ...reply };
    },
  });
  return { url: fake.url, calls: () => calls, close: () => fake.close() };
}
