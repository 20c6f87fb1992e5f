/**
 * Which summarizer a worker's job gets, and how its requests travel: every
 * job shares one SDK client, and that client sends over node:http (its
 * requests ask for `accept-encoding: identity`, which Node's fetch never
 * sends), so a worker's calls leave nothing for the full collections to
 * free (docs/OPERATIONS.md, "What sets a worker's RSS").
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { OFFLINE_SUMMARIZER, type SummarizerChoice } from "../../src/core/compactor.js";
import type { Summarizer, SummarizationRequest } from "../../src/core/summarizer.js";
import { createSummarizerSource } from "../../src/worker/summarizerSource.js";
import { startFakeAnthropic, type FakeAnthropic } from "../helpers/fakeAnthropic.js";

let fake: FakeAnthropic;
beforeEach(async () => {
  fake = await startFakeAnthropic();
});
afterEach(async () => {
  await fake.close();
});

const request: SummarizationRequest = {
  kind: "history",
  system: "You summarize agent sessions.",
  prompt: "<conversation>\n[User]: rename the billing module → invoices\n</conversation>",
  maxTokens: 500,
  previousSummary: undefined,
  omitted: 0,
  signal: new AbortController().signal,
  onProgress: () => undefined,
  onWaiting: () => undefined,
};

function anthropic(choice: SummarizerChoice): Summarizer {
  if (choice === OFFLINE_SUMMARIZER) throw new Error("expected the Anthropic summarizer");
  return choice;
}

describe("a worker's summarizers", () => {
  it("send each job's calls over node:http, with the job's model or the configured one", async () => {
    const source = createSummarizerSource({ anthropicApiKey: "sk-ant-test", anthropicBaseUrl: fake.url, model: "claude-configured" });
    await anthropic(source(undefined)).summarize(request);
    await anthropic(source("claude-requested")).summarize(request);

    expect(fake.requests.map((recorded) => recorded.body.model)).toEqual(["claude-configured", "claude-requested"]);
    for (const recorded of fake.requests) {
      expect(recorded.headers["accept-encoding"]).toBe("identity");
      expect(recorded.headers["content-length"]).toBeDefined();
      expect(recorded.headers.authorization).toBe("Bearer sk-ant-test");
    }
  });

  it("are the offline summarizer when no API key is configured", () => {
    const source = createSummarizerSource({ anthropicApiKey: undefined, anthropicBaseUrl: fake.url, model: undefined });
    expect(source("claude-requested")).toBe(OFFLINE_SUMMARIZER);
  });
});
