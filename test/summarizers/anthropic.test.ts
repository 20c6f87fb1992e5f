import Anthropic, { APIError, APIUserAbortError, AnthropicError } from "@anthropic-ai/sdk";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { SummaryRefusedError, SummaryUnfinishedError } from "../../src/core/errors.js";
import type { SummarizationRequest } from "../../src/core/summarizer.js";
import { createAnthropicSummarizer, DEFAULT_MODEL, type AnthropicSummarizerOptions } from "../../src/summarizers/anthropic.js";
import { startFakeAnthropic, type Behaviour, type FakeAnthropic } from "../helpers/fakeAnthropic.js";

const API_KEY = "sk-ant-test-key";
const MODEL = "claude-test-model";

let fake: FakeAnthropic;

beforeEach(async () => {
  fake = await startFakeAnthropic();
});

afterEach(async () => {
  await fake.close();
});

function summarizer(options: Partial<AnthropicSummarizerOptions> = {}) {
  return createAnthropicSummarizer({ apiKey: API_KEY, baseURL: fake.url, model: MODEL, ...options });
}

/** A request whose progress calls are counted; `onEvent` sees the running count. */
function summarizationRequest(
  overrides: Partial<SummarizationRequest> = {},
  onEvent: (count: number) => void = () => {},
): { request: SummarizationRequest; progress: () => number } {
  let count = 0;
  const request: SummarizationRequest = {
    kind: "history",
    system: "You summarize agent sessions.",
    prompt: "<conversation>\n[User]: hello\n</conversation>\n\nSummarize it.",
    maxTokens: 1234,
    previousSummary: undefined,
    omitted: 0,
    signal: new AbortController().signal,
    onProgress: () => {
      count++;
      onEvent(count);
    },
    onWaiting: () => {},
    ...overrides,
  };
  return { request, progress: () => count };
}

describe("createAnthropicSummarizer", () => {
  it("assembles the summary from the streamed chunks and reports usage", async () => {
    const text = "## Goal\nRename the billing module.\n\n## Next Steps\n1. Update imports.";
    fake.setScript([{ kind: "reply", text, chunks: 7, inputTokens: 321, outputTokens: 45 }]);

    const result = await summarizer().summarize(summarizationRequest().request);

    expect(result).toEqual({ text, truncated: false, stopReason: "end_turn", usage: { inputTokens: 321, outputTokens: 45 } });
  });

  it("calls onProgress once for every streamed event, thinking deltas included, but not for pings", async () => {
    fake.setScript([{ kind: "reply", text: "SUMMARY", chunks: 4, thinking: "Let me think about it", thinkingChunks: 3, pings: 3 }]);
    const { request, progress } = summarizationRequest();

    const result = await summarizer().summarize(request);

    // message_start, 3 pings, thinking block (start, 3 deltas, signature, stop),
    // text block (start, 4 deltas, stop), message_delta, message_stop: all but the pings.
    expect(fake.requests[0]?.eventsSent).toBe(18);
    expect(progress()).toBe(15);
    expect(result.text).toBe("SUMMARY");
  });

  it("calls onProgress for every event but pings through a client of the caller's own (Node's fetch) too", async () => {
    fake.setScript([{ kind: "reply", text: "SUMMARY", chunks: 4, pings: 3 }]);
    const { request, progress } = summarizationRequest();
    const client = new Anthropic({ apiKey: API_KEY, baseURL: fake.url, maxRetries: 0 });

    await summarizer({ client }).summarize(request);

    // message_start, 3 pings, text block (start, 4 deltas, stop), message_delta, message_stop: all but the pings.
    expect(fake.requests[0]?.eventsSent).toBe(12);
    expect(progress()).toBe(9);
  });

  it.each([
    ["compactd's own client", () => ({})],
    ["a client of the caller's own", () => ({ client: new Anthropic({ apiKey: API_KEY, baseURL: fake.url }) })],
  ])("tells the watchdog it is waiting while the SDK waits out a retry-after, and resumes with the retry (%s)", async (_name, options) => {
    fake.setScript([{ kind: "error", status: 429, retryAfterMs: 50 }, { kind: "error", status: 529, retryAfterMs: 50 }, { kind: "reply" }]);
    const calls: string[] = [];
    const { request } = summarizationRequest({ onProgress: () => calls.push("progress"), onWaiting: () => calls.push("waiting") });

    await summarizer(options()).summarize(request);

    expect(fake.requests).toHaveLength(3);
    // Each wait ends with its retry being sent; only then do the events come.
    expect(calls.slice(0, 4)).toEqual(["waiting", "progress", "waiting", "progress"]);
    expect(calls.slice(4).every((call) => call === "progress")).toBe(true);
  });

  it("sends the model, the completion cap, the system prompt and one user message, streaming, without sampling parameters", async () => {
    const { request } = summarizationRequest();
    await summarizer().summarize(request);

    const sent = fake.requests[0];
    expect(sent?.path).toBe("/v1/messages");
    expect(sent?.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(sent?.headers["anthropic-version"]).toBeTruthy();
    expect(Object.keys(sent?.body ?? {}).sort()).toEqual(["max_tokens", "messages", "model", "stream", "system"]);
    expect(sent?.body).toEqual({
      model: MODEL,
      max_tokens: 1234,
      system: request.system,
      messages: [{ role: "user", content: request.prompt }],
      stream: true,
    });
  });

  it("reports a summary that stopped on max_tokens as truncated", async () => {
    fake.setScript([{ kind: "reply", text: "## Goal\nRename the bill", stopReason: "max_tokens" }]);

    const result = await summarizer().summarize(summarizationRequest().request);

    expect(result).toMatchObject({ truncated: true, stopReason: "max_tokens", text: "## Goal\nRename the bill" });
  });

  it("reports a request that filled the model's window by its stop reason, not as truncated", async () => {
    fake.setScript([{ kind: "reply", text: "## Goal\nRename", stopReason: "model_context_window_exceeded" }]);

    const result = await summarizer().summarize(summarizationRequest().request);

    expect(result).toMatchObject({ truncated: false, stopReason: "model_context_window_exceeded" });
  });

  it.each(["pause_turn", "tool_use", null, "a_stop_reason_not_yet_invented"] as const)(
    "fails with SummaryUnfinishedError, not a truncated summary, when the stream stops with stop_reason %s",
    async (stopReason) => {
      fake.setScript([{ kind: "reply", text: "## Goal\nRename the bill", stopReason }]);

      const error = await summarizer().summarize(summarizationRequest().request).catch((err: unknown) => err);

      expect(error).toBeInstanceOf(SummaryUnfinishedError);
      expect((error as SummaryUnfinishedError).stopReason).toBe(stopReason);
      expect((error as Error).message).toContain(stopReason ?? "missing");
    },
  );

  it("does not call a summary that stopped on a stop sequence truncated", async () => {
    fake.setScript([{ kind: "reply", text: "done", stopReason: "stop_sequence" }]);
    expect((await summarizer().summarize(summarizationRequest().request)).truncated).toBe(false);
  });

  it("fails with SummaryRefusedError when the model refuses instead of passing the refusal off as a summary", async () => {
    fake.setScript([{ kind: "reply", text: "I can't help with that.", stopReason: "refusal" }]);

    await expect(summarizer().summarize(summarizationRequest().request)).rejects.toBeInstanceOf(SummaryRefusedError);
  });

  it.each([429, 529, 500])("retries an HTTP %i inside the same call and returns the summary of the retry", async (status) => {
    fake.setScript([{ kind: "error", status }, { kind: "reply", text: "after retry" }]);

    const result = await summarizer().summarize(summarizationRequest().request);

    expect(result.text).toBe("after retry");
    expect(fake.requests).toHaveLength(2);
    expect(fake.requests[1]?.headers["x-stainless-retry-count"]).toBe("1");
  });

  it("throws the SDK's error, status intact, once its retries are spent", async () => {
    const overloaded: Behaviour = { kind: "error", status: 529 };
    fake.setScript([overloaded, overloaded, overloaded]);

    const error = await summarizer({ maxRetries: 1 })
      .summarize(summarizationRequest().request)
      .catch((err: unknown) => err);

    expect(error).toBeInstanceOf(APIError);
    expect((error as APIError).status).toBe(529);
    expect((error as APIError).type).toBe("overloaded_error");
    expect(fake.requests).toHaveLength(2);
  });

  it("surfaces a context overflow as the SDK's 400 error, unretried, with the API's message", async () => {
    fake.setScript([{ kind: "overflow", promptTokens: 210_000, maxTokens: 200_000 }]);

    const error = await summarizer().summarize(summarizationRequest().request).catch((err: unknown) => err);

    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    expect((error as APIError).status).toBe(400);
    expect((error as APIError).apiMessage).toBe("prompt is too long: 210000 tokens > 200000 maximum");
    expect(fake.requests).toHaveLength(1);
  });

  it("throws when aborted mid-stream and never returns the partial text", async () => {
    fake.setScript([{ kind: "stall", afterEvents: 5, text: "PARTIAL SUMMARY", chunks: 3 }]);
    const controller = new AbortController();
    // message_start, ping, content_block_start and two text deltas arrive (all but the ping are progress); then the abort.
    const { request, progress } = summarizationRequest({ signal: controller.signal }, (n) => {
      if (n === 4) controller.abort();
    });

    await expect(summarizer().summarize(request)).rejects.toBeInstanceOf(APIUserAbortError);
    expect(progress()).toBe(4);
    await vi.waitFor(() => expect(fake.requests[0]?.disconnected).toBe(true));
  });

  it("throws when aborted while a slow stream is still delivering text", async () => {
    fake.setScript([{ kind: "reply", text: "x".repeat(200), chunks: 40, delayMs: 10 }]);
    const controller = new AbortController();
    const { request } = summarizationRequest({ signal: controller.signal }, (n) => {
      if (n === 8) controller.abort();
    });

    await expect(summarizer().summarize(request)).rejects.toBeInstanceOf(APIUserAbortError);
  });

  it("throws when aborted before the response headers arrive", async () => {
    fake.setScript([{ kind: "silent" }]);
    const controller = new AbortController();
    const { request, progress } = summarizationRequest({ signal: controller.signal });

    const pending = summarizer().summarize(request);
    await vi.waitFor(() => expect(fake.requests).toHaveLength(1));
    controller.abort();

    await expect(pending).rejects.toBeInstanceOf(APIUserAbortError);
    expect(progress()).toBe(0);
  });

  it("makes no request when the signal is already aborted", async () => {
    const { request } = summarizationRequest({ signal: AbortSignal.abort() });

    await expect(summarizer().summarize(request)).rejects.toBeInstanceOf(APIUserAbortError);
    expect(fake.requests).toHaveLength(0);
  });

  it.each(["destroy", "end"] as const)("throws when the stream is cut off (%s) before message_stop", async (how) => {
    fake.setScript([{ kind: "cutOff", afterEvents: 5, how, text: "PARTIAL SUMMARY", chunks: 3 }]);

    const error = await summarizer().summarize(summarizationRequest().request).catch((err: unknown) => err);

    expect(error).toBeInstanceOf(AnthropicError);
    expect(error).not.toBeInstanceOf(APIUserAbortError);
  });

  it("throws the SDK's error for an error event in the middle of the stream, without retrying it", async () => {
    fake.setScript([{ kind: "errorEvent", afterEvents: 4, type: "overloaded_error" }]);

    const error = await summarizer().summarize(summarizationRequest().request).catch((err: unknown) => err);

    expect(error).toBeInstanceOf(APIError);
    expect((error as APIError).type).toBe("overloaded_error");
    expect((error as APIError).status).toBeUndefined();
    expect(fake.requests).toHaveLength(1);
  });

  it("authenticates with the configured API key at the configured base URL", async () => {
    await fake.close();
    fake = await startFakeAnthropic({ apiKey: "sk-ant-right" });

    const ok = await summarizer({ apiKey: "sk-ant-right" }).summarize(summarizationRequest().request);
    const wrong = await summarizer({ apiKey: "sk-ant-wrong" })
      .summarize(summarizationRequest().request)
      .catch((err: unknown) => err);

    expect(ok.truncated).toBe(false);
    expect(wrong).toBeInstanceOf(Anthropic.AuthenticationError);
    expect(fake.requests.map((r) => r.headers.authorization)).toEqual(["Bearer sk-ant-right"]);
  });

  it("uses a client it is given, with its own base URL and key", async () => {
    const client = new Anthropic({ apiKey: "sk-ant-from-client", baseURL: fake.url, maxRetries: 0 });
    fake.setScript([{ kind: "error", status: 529 }, { kind: "reply", text: "second" }]);

    const result = await createAnthropicSummarizer({ client, model: MODEL, maxRetries: 1 }).summarize(
      summarizationRequest().request,
    );

    expect(result.text).toBe("second");
    expect(fake.requests[0]?.headers.authorization).toBe("Bearer sk-ant-from-client");
  });

  it("refuses options it cannot use, naming the field", () => {
    expect(() => createAnthropicSummarizer({ model: " " })).toThrow(/model/);
    expect(() => createAnthropicSummarizer({ model: MODEL, maxRetries: -1 })).toThrow(/maxRetries/);
    expect(() => createAnthropicSummarizer({ model: MODEL, timeoutMs: 0 })).toThrow(/timeoutMs/);
  });

  it("names a default model that is a Claude model id", () => {
    expect(DEFAULT_MODEL).toMatch(/^claude-[a-z]+-\d/);
  });
});
