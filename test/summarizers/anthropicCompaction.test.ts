/**
 * The compactor with the real Anthropic summarizer, through the real SDK, against
 * the local stand-in for the Messages API: the stall watchdog and the retry
 * policy seen from the wire.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCompactor, type Result } from "../../src/core/compactor.js";
import { parseConversation } from "../../src/core/formats/parseConversation.js";
import { createAnthropicSummarizer } from "../../src/summarizers/anthropic.js";
import { conversation, reactTurn } from "../helpers/conversations.js";
import { startFakeAnthropic, type FakeAnthropic, type Script } from "../helpers/fakeAnthropic.js";

let fake: FakeAnthropic;
beforeAll(async () => {
  fake = await startFakeAnthropic();
});
afterAll(() => fake.close());

/** Four long turns and a short one: plenty outside the keep-recent budget. */
const session = conversation(...Array.from({ length: 4 }, () => reactTurn({ rounds: 6, toolResultChars: 3_500 })), reactTurn({ rounds: 1 }));

async function compactWith(script: Script, stallTimeoutMs: number, maxRetries = 0): Promise<{ result: Result; requests: number }> {
  fake.setScript(script);
  const before = fake.requests.length;
  const summarizer = createAnthropicSummarizer({ apiKey: "sk-test", baseURL: fake.url, model: "claude-test", maxRetries });
  const compactor = createCompactor({ settings: { contextWindow: 100_000, keepRecentTokens: 8_000, stallTimeoutMs }, summarizer })!;
  const result = await compactor.compact(parseConversation(session), { reason: "manual" });
  return { result, requests: fake.requests.length - before };
}

describe("the compactor over the Anthropic API", () => {
  it("keeps a slow stream alive while events keep arriving", async () => {
    const { result } = await compactWith(() => ({ kind: "reply", text: "## Goal\nslow and complete", chunks: 8, pings: 4, delayMs: 60 }), 600);
    expect(result.degraded).toBe(false);
    expect(result.summary).toContain("slow and complete");
  });

  it("cancels a response that sent its headers and then nothing, retries once, then degrades", async () => {
    const { result, requests } = await compactWith(() => ({ kind: "stall", afterEvents: 0 }), 200);
    expect(requests).toBe(result.splitTurn ? 4 : 2);
    expect(result.degraded).toBe(true);
    expect(result.degradedReason).toContain("no output for 200 ms");
  });

  it("cancels a stream that goes silent halfway", async () => {
    const { result } = await compactWith(() => ({ kind: "stall", afterEvents: 3, chunks: 6 }), 200);
    expect(result.degraded).toBe(true);
    expect(result.degradedReason).toContain("no output for 200 ms");
  });

  it("recovers on the second attempt after a stream is cut off", async () => {
    const seen = new Set<string>();
    // The first request for each prompt is cut off; its retry (the same prompt) succeeds.
    const { result } = await compactWith((request) => {
      if (seen.has(request.userText)) return { kind: "reply", text: "## Goal\nsecond try" };
      seen.add(request.userText);
      return { kind: "cutOff", afterEvents: 2 };
    }, 5_000);
    expect(result.degraded).toBe(false);
    expect(result.summary).toContain("second try");
  });

  it("rejects a summary that stopped on max_tokens", async () => {
    const { result } = await compactWith(() => ({ kind: "reply", text: "## Goal\nThe user wan", stopReason: "max_tokens" }), 5_000);
    expect(result.degraded).toBe(true);
    expect(result.degradedReason).toContain("token cap");
  });

  it.each([400, 401, 403, 404, 413, 422])("gives up at once on a request the API rejects with HTTP %i, naming what it said", async (status) => {
    const said = `what the API said about ${status}`;
    const { result, requests } = await compactWith(() => ({ kind: "error", status, message: said }), 5_000);
    expect(result.degraded).toBe(true);
    expect(requests).toBe(result.splitTurn ? 2 : 1);
    expect(result.degradation.map((d) => d.cause)).toEqual(result.splitTurn ? ["rejected", "rejected"] : ["rejected"]);
    expect(result.degradedReason).toContain(said);
    expect(result.degradedReason).toContain(String(status));
  });

  it("gives up at once on an error event that rejects the request mid-stream", async () => {
    const { result } = await compactWith(() => ({ kind: "errorEvent", afterEvents: 2, type: "invalid_request_error", message: "bad block" }), 5_000);
    expect(result.degradation.map((d) => d.cause)).toContain("rejected");
    expect(result.degradedReason).toContain("bad block");
  });

  it.each([408, 409, 429, 500, 529])("counts HTTP %i as passing trouble, tried again", async (status) => {
    const { result, requests } = await compactWith(() => ({ kind: "error", status }), 5_000);
    expect(requests).toBe(result.splitTurn ? 4 : 2);
    expect(new Set(result.degradation.map((d) => d.cause))).toEqual(new Set(["error"]));
  });

  it("gives up at once on a model that refuses to summarize, never taking the refusal for a summary", async () => {
    const { result, requests } = await compactWith(() => ({ kind: "reply", text: "I can't help with that.", stopReason: "refusal" }), 5_000);
    expect(requests).toBe(result.splitTurn ? 2 : 1);
    expect(new Set(result.degradation.map((d) => d.cause))).toEqual(new Set(["refused"]));
    expect(result.summary).not.toContain("I can't help with that.");
  });

  it.each(["pause_turn", "tool_use", null])("degrades a stream that stopped with stop_reason %s as unfinished, never as truncated", async (stopReason) => {
    const { result } = await compactWith(() => ({ kind: "reply", text: "## Goal\nhalf a summ", stopReason }), 5_000);
    expect(new Set(result.degradation.map((d) => d.cause))).toEqual(new Set(["unfinished"]));
    expect(result.degradedReason).toContain(stopReason ?? "missing");
    expect(result.degradedReason).not.toContain("token cap");
    expect(result.summary).not.toContain("half a summ");
  });

  it.each([429, 529])("waits out an HTTP %i's retry-after longer than the stall timeout, which is no stall", async (status) => {
    // Every attempt's first request is told to come back later; the SDK's retry of it gets the summary.
    const { result } = await compactWith(
      (request) =>
        request.headers["x-stainless-retry-count"] === "0" ? { kind: "error", status, retryAfterMs: 900 } : { kind: "reply", text: "## Goal\nafter the wait" },
      300,
      1,
    );
    expect(result.degradation).toEqual([]);
    expect(result.summary).toContain("after the wait");
  });

  it.each(["ping", "comment"] as const)("cancels as stalled a stream that sends only keep-alives (%s), no content", async (keepAlive) => {
    const { result } = await compactWith(() => ({ kind: "keepAlive", everyMs: 40, with: keepAlive }), 300);
    expect(result.degraded).toBe(true);
    expect(new Set(result.degradation.map((d) => d.cause))).toEqual(new Set(["stalled"]));
    expect(result.degradedReason).toContain("no output for 300 ms");
  });
});
