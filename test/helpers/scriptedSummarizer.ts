/**
 * An in-process Summarizer for core tests: records every request and answers
 * from a script, so tests can count LLM calls and drive each failure mode
 * without a network. (Tests of the real Anthropic summarizer use the fake HTTP
 * server in fakeAnthropic.ts instead.)
 */
import type { SummarizationRequest, SummarizationResponse, Summarizer } from "../../src/core/summarizer.js";

export type ScriptStep =
  | { readonly kind: "reply"; readonly text: string }
  | { readonly kind: "truncated"; readonly text?: string }
  | { readonly kind: "empty" }
  | { readonly kind: "fail"; readonly error: Error }
  /** Reports progress `ticks` times, `everyMs` apart, then replies. */
  | { readonly kind: "slow"; readonly ticks: number; readonly everyMs: number; readonly text: string }
  /** Never answers and never reports progress; ends only when its signal aborts. */
  | { readonly kind: "silent" };

export interface ScriptedSummarizer extends Summarizer {
  readonly requests: SummarizationRequest[];
}

/**
 * `script` picks the step for each call (numbered from 0 across all calls);
 * the default replies with a short structured summary naming the request kind.
 */
export function scriptedSummarizer(
  script: (request: SummarizationRequest, call: number) => ScriptStep = (r) => ({
    kind: "reply",
    text: `## Goal\nSummary of ${r.kind} (${r.omitted} messages left out)`,
  }),
): ScriptedSummarizer {
  const requests: SummarizationRequest[] = [];
  return {
    name: "scripted",
    requests,
    async summarize(request): Promise<SummarizationResponse> {
      const step = script(request, requests.length);
      requests.push(request);
      switch (step.kind) {
        case "reply":
          return { text: step.text, truncated: false };
        case "truncated":
          return { text: step.text ?? "## Goal\nThe user wan", truncated: true };
        case "empty":
          return { text: "  \n", truncated: false };
        case "fail":
          throw step.error;
        case "slow":
          for (let i = 0; i < step.ticks; i++) {
            await new Promise((r) => setTimeout(r, step.everyMs));
            request.onProgress();
          }
          return { text: step.text, truncated: false };
        case "silent":
          return new Promise((_, reject) => {
            request.signal.addEventListener("abort", () => reject(request.signal.reason), { once: true });
          });
      }
    },
  };
}
