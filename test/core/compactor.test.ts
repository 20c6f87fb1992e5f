import { describe, expect, it } from "vitest";
import { Compactor, createCompactor, OFFLINE_SUMMARIZER, type CompactOptions, type Result } from "../../src/core/compactor.js";
import type { DegradationCause } from "../../src/core/degradation.js";
import { CompactionDisabledError, NothingToCompactError } from "../../src/core/errors.js";
import { splitFileOperations } from "../../src/core/fileOperations.js";
import { parseConversation } from "../../src/core/formats/parseConversation.js";
import type { Message } from "../../src/core/message.js";
import { OFFLINE_SUMMARY_TOKENS } from "../../src/core/offlineSummary.js";
import { splitPinnedRequests, userRequestsOf } from "../../src/core/pinnedRequests.js";
import { prepare } from "../../src/core/prepare.js";
import {
  DEFAULT_KEEP_RECENT_TOKENS,
  isAboveThreshold,
  minimumContextWindow,
  MIN_USABLE_TOKENS,
  normalizeSettings,
  shouldCompact,
  summaryBudget,
  threshold,
  turnPrefixBudget,
  type SettingsInput,
} from "../../src/core/settings.js";
import type { SummarizerCallReport, SummaryKind } from "../../src/core/summarizer.js";
import { previousSummaryOf, SUMMARY_PREAMBLE, summaryMessage } from "../../src/core/summaryEnvelope.js";
import { MESSAGE_OVERHEAD_TOKENS, TokenEstimator } from "../../src/core/tokenEstimator.js";
import { conversation, fillerText, reactTurn, type RawMessage } from "../helpers/conversations.js";
import { listCompactedSessions } from "../helpers/corpus.js";
import { scriptedSummarizer, type ScriptStep } from "../helpers/scriptedSummarizer.js";

const WINDOW: SettingsInput = { contextWindow: 100_000, keepRecentTokens: 8_000 };

function compactorWith(step?: (kind: string, call: number) => ScriptStep, settings: SettingsInput = WINDOW) {
  const summarizer = scriptedSummarizer(step && ((r, call) => step(r.kind, call)));
  const compactor = createCompactor({ settings, summarizer })!;
  return { compactor, summarizer };
}

/** A long multi-turn session: about 60k tokens of tool traffic. */
function longSession(turnIds = false): RawMessage[] {
  return conversation(...Array.from({ length: 10 }, (_, i) => reactTurn({ rounds: 6, toolResultChars: 3_500, turnId: turnIds ? `turn-${i}` : undefined })));
}

const manual: CompactOptions = { reason: "manual" };

/** The requests of one kind: long sessions usually split the turn the cut lands in. */
function ofKind<R extends { kind: string }>(requests: readonly R[], kind: string): R[] {
  return requests.filter((r) => r.kind === kind);
}

function summariesIn(messages: unknown[]): number {
  return parseConversation(messages).messages.filter((m: Message) => previousSummaryOf(m) !== undefined).length;
}

describe("Compactor", () => {
  it("is not built without a context window or without a summarizer", () => {
    expect(createCompactor({ settings: {}, summarizer: scriptedSummarizer() })).toBeNull();
    expect(createCompactor({ settings: { contextWindow: 100_000 }, summarizer: undefined })).toBeNull();
  });

  it("cannot be constructed where createCompactor returns null: without a window there is no budget, even for an overflow", () => {
    // Built directly, it once summarized 47 messages into empty transcripts: every message was over a budget of 0.
    expect(() => new Compactor(normalizeSettings({}), scriptedSummarizer())).toThrow(
      new TypeError("new Compactor: settings.contextWindow must be above 0 (without a window there is no budget to enforce); createCompactor returns null instead"),
    );
    const noSummarizer = undefined as unknown as ConstructorParameters<typeof Compactor>[1];
    expect(() => new Compactor(normalizeSettings({ contextWindow: 100_000 }), noSummarizer)).toThrow(
      new TypeError("new Compactor: a summarizer is required; createCompactor returns null instead"),
    );
  });

  it("replaces the head with one summary and returns the tail exactly as it came in", async () => {
    const raw = longSession();
    const { compactor, summarizer } = compactorWith();
    const result = await compactor.compact(parseConversation(raw), manual);
    expect(ofKind(summarizer.requests, "history")).toHaveLength(1);
    expect(summarizer.requests).toHaveLength(result.splitTurn ? 2 : 1);
    expect(result.messages[0]).toEqual({ role: "user", content: expect.stringContaining(SUMMARY_PREAMBLE) });
    const tail = result.messages.slice(1);
    tail.forEach((m, i) => expect(m).toBe(raw[result.firstKeptIndex + i]));
    expect(result).toMatchObject({
      reason: "manual",
      messagesBefore: raw.length,
      messagesAfter: 1 + raw.length - result.firstKeptIndex,
      degraded: false,
      degradedReason: null,
      omitted: 0,
    });
    expect(result.tokensAfter).toBeLessThan(result.tokensBefore / 3);
  });

  it("leaves room for several more rounds: tokens after are under two thirds of the threshold", async () => {
    const settings = normalizeSettings({ contextWindow: 80_000 });
    const raw = conversation(longSession(), longSession());
    const { compactor } = compactorWith(undefined, settings);
    const result = await compactor.compact(parseConversation(raw), { reason: "threshold" });
    expect(result.tokensBefore).toBeGreaterThan(threshold(settings));
    expect(result.tokensAfter).toBeLessThan((threshold(settings) * 2) / 3);
  });

  it("compacts inside a single 40-round turn, summarizing the turn's head separately", async () => {
    const raw = reactTurn({ rounds: 40, toolResultChars: 2_500 });
    const { compactor, summarizer } = compactorWith();
    const result = await compactor.compact(parseConversation(raw), manual);
    expect(result.splitTurn).toBe(true);
    expect(summarizer.requests.map((r) => r.kind)).toEqual(["turnPrefix"]);
    expect(summarizer.requests[0]!.prompt).toContain((raw[0]!.content as string).slice(0, 60));
    expect(result.summary).toContain("Summary of turnPrefix");
    expect(parseConversation(result.messages).messages[1]!.kind).not.toBe("toolResult");
  });

  it("runs the history and turn-prefix summaries concurrently", async () => {
    let inFlight = 0;
    let peak = 0;
    const summarizer = {
      name: "concurrency",
      async summarize() {
        peak = Math.max(peak, ++inFlight);
        await new Promise((r) => setTimeout(r, 20));
        inFlight--;
        return { text: "## Goal\nok", truncated: false };
      },
    };
    const compactor = createCompactor({ settings: WINDOW, summarizer })!;
    const raw = conversation(reactTurn({ rounds: 6, toolResultChars: 3_000 }), reactTurn({ rounds: 40, toolResultChars: 2_500 }));
    const result = await compactor.compact(parseConversation(raw), manual);
    expect(result.splitTurn).toBe(true);
    expect(peak).toBe(2);
  });

  it("heads the summary of a split turn's start as the turn in progress, after the history's summary", async () => {
    const { compactor } = compactorWith();
    const raw = conversation(reactTurn({ rounds: 6, toolResultChars: 3_000 }), reactTurn({ rounds: 40, toolResultChars: 2_500 }));
    const result = await compactor.compact(parseConversation(raw), manual);
    expect(result.splitTurn).toBe(true);
    const history = result.summary.indexOf("Summary of history");
    const heading = result.summary.indexOf("## Turn in progress");
    expect(history).toBeGreaterThanOrEqual(0);
    expect(heading).toBeGreaterThan(history);
    expect(result.summary.indexOf("Summary of turnPrefix")).toBeGreaterThan(heading);
  });

  it("reports nothing to compact for a small conversation and makes no call", async () => {
    const { compactor, summarizer } = compactorWith();
    await expect(compactor.compact(parseConversation(reactTurn({ rounds: 2 })), manual)).rejects.toBeInstanceOf(NothingToCompactError);
    await expect(compactor.compact(parseConversation(reactTurn({ rounds: 2 })), manual)).rejects.toThrow("compaction: nothing outside the keep-recent budget");
    await expect(compactor.compact(parseConversation(reactTurn({ rounds: 2 })), manual)).rejects.toMatchObject({ stillAboveThreshold: false });
    expect(summarizer.requests).toHaveLength(0);
  });

  it("says when nothing to compact leaves the context above the threshold: a greeting before a paste larger than the window", async () => {
    const { compactor, summarizer } = compactorWith(undefined, { contextWindow: 32_000 });
    const pasted = parseConversation([
      { role: "user", content: "hi" },
      { role: "assistant", content: "hello" },
      { role: "user", content: "word ".repeat(60_000) },
    ]);
    const refusal = compactor.compact(pasted, manual);
    await expect(refusal).rejects.toBeInstanceOf(NothingToCompactError);
    await expect(refusal).rejects.toMatchObject({ stillAboveThreshold: true, message: expect.stringContaining("above the threshold") });
    expect(summarizer.requests).toHaveLength(0);
  });

  it("comes out of a compaction with the defaults at about summary + 20,000 tokens, below the threshold, whatever the context grew to", async () => {
    const settings = normalizeSettings({ contextWindow: 200_000 });
    expect(settings.keepRecentTokens).toBe(DEFAULT_KEEP_RECENT_TOKENS);
    const { compactor } = compactorWith(undefined, { contextWindow: 200_000 });
    const result = await compactor.compact(parseConversation(conversation(longSession(), longSession(), longSession(), longSession())), { reason: "threshold" });
    expect(shouldCompact(settings, result.tokensBefore)).toBe(true);
    const summaryTokens = new TokenEstimator().countText(summaryMessage(result.summary).content) + MESSAGE_OVERHEAD_TOKENS;
    const keptTokens = result.tokensAfter - summaryTokens;
    // The largest tail under the budget: within one tool round (about 1,000 tokens here) of it.
    expect(keptTokens).toBeLessThanOrEqual(DEFAULT_KEEP_RECENT_TOKENS);
    expect(keptTokens).toBeGreaterThan(DEFAULT_KEEP_RECENT_TOKENS - 2_000);
    expect(shouldCompact(settings, result.tokensAfter)).toBe(false);
    expect(result.tokensAfter).toBeLessThan(threshold(settings) / 4);
  });

  it("caps the history summary at the summary budget and a split turn's head at half of it, floors included", async () => {
    const raw = conversation(reactTurn({ rounds: 6, toolResultChars: 3_000 }), reactTurn({ rounds: 40, toolResultChars: 2_500 }));
    for (const [input, history, head] of [
      [WINDOW, 8_000, 4_000], // keep-recent caps four fifths of the reserve (13,107)
      [{ ...WINDOW, maxSummaryTokens: 3_000 }, 3_000, 1_500],
      [{ ...WINDOW, maxSummaryTokens: 600 }, 1_024, 512],
    ] as const) {
      const { compactor, summarizer } = compactorWith(undefined, input);
      const result = await compactor.compact(parseConversation(raw), manual);
      expect(result.splitTurn).toBe(true);
      const settings = normalizeSettings(input);
      expect([summaryBudget(settings), turnPrefixBudget(settings)]).toEqual([history, head]);
      expect(ofKind(summarizer.requests, "history").map((r) => r.maxTokens)).toEqual([history]);
      expect(ofKind(summarizer.requests, "turnPrefix").map((r) => r.maxTokens)).toEqual([head]);
    }
  });

  it("never sends a summarization request larger than the window: prompt, previous summary and completion cap together", async () => {
    const previous = `## Critical Context\n${fillerText(12_000, 7)}`;
    const raw = [summaryMessage(previous), ...conversation(...Array.from({ length: 12 }, () => reactTurn({ rounds: 4, toolResultChars: 3_000 })), reactTurn({ rounds: 40, toolResultChars: 2_500 }))];
    const estimator = new TokenEstimator();
    for (const contextWindow of [12_000, 24_000]) {
      const { compactor, summarizer } = compactorWith(undefined, { contextWindow, reserveTokens: 4_000 });
      await compactor.compact(parseConversation(raw), { reason: "manual", instructions: "Keep every name." });
      expect(summarizer.requests.map((r) => r.kind).sort()).toEqual(["history", "turnPrefix"]);
      // The ranges are larger than one request can carry: the bound is what keeps each request in.
      expect(summarizer.requests.some((r) => r.omitted > 0)).toBe(true);
      for (const r of summarizer.requests) {
        expect(estimator.countText(r.system) + estimator.countText(r.prompt) + r.maxTokens, `${r.kind} in ${contextWindow}`).toBeLessThanOrEqual(contextWindow);
      }
    }
  });

  it("gives back an Anthropic top-level system prompt as it came, with the summary and the tail", async () => {
    const system = [{ type: "text", text: "You are terse.", cache_control: { type: "ephemeral" } }];
    const raw = longSession();
    const { compactor } = compactorWith();
    const result = await compactor.compact(parseConversation({ system, messages: raw }), manual);
    expect(result.system).toBe(system);
    expect(result.messages).toEqual([summaryMessage(result.summary), ...raw.slice(result.firstKeptIndex)]);
  });

  it("reports nothing to compact when its own output is compacted again, with no LLM call", async () => {
    const { compactor, summarizer } = compactorWith();
    const first = await compactor.compact(parseConversation(longSession()), manual);
    const calls = summarizer.requests.length;
    const again = compactor.compact(parseConversation(first.messages), manual);
    await expect(again).rejects.toMatchObject({ code: "nothing_to_compact" });
    expect(summarizer.requests).toHaveLength(calls);
  });

  it("updates the previous summary instead of summarizing it again, and exactly one summary survives", async () => {
    let historyCalls = 0;
    const { compactor, summarizer } = compactorWith((kind) => ({
      kind: "reply",
      text: kind === "history" ? `## Goal\nsummary number ${++historyCalls}` : "## Original Request\nprefix",
    }));
    const first = await compactor.compact(parseConversation(longSession()), manual);
    const grown = [...first.messages, ...longSession()];
    const second = await compactor.compact(parseConversation(grown), manual);
    const update = ofKind(summarizer.requests, "history")[1]!;
    expect(update.previousSummary).toMatch(/^## Goal\nsummary number 1/);
    expect(update.prompt).toContain("summary number 1");
    // Once, as the summary to update: the previous summary's message is not in the transcript again.
    expect(update.prompt.split("summary number 1")).toHaveLength(2);
    expect(summariesIn(second.messages)).toBe(1);
    expect(second.summary).toContain("summary number 2");
  });

  it("updates the previous summary when only the running turn grew since, and still one summary survives", async () => {
    const { compactor, summarizer } = compactorWith();
    const first = await compactor.compact(parseConversation(reactTurn({ rounds: 40, toolResultChars: 2_500, endsWith: "toolResults" })), manual);
    expect(first.splitTurn).toBe(true);
    // More rounds of the same turn: no new request from the user.
    const moreRounds = reactTurn({ rounds: 30, toolResultChars: 2_500 }).slice(1);
    const second = await compactor.compact(parseConversation([...first.messages, ...moreRounds]), manual);
    const update = summarizer.requests.slice(1).find((r) => r.kind === "history")!;
    expect(update.previousSummary).toContain("Summary of turnPrefix");
    expect(update.prompt.split("Summary of turnPrefix")).toHaveLength(2);
    expect(summariesIn(second.messages)).toBe(1);
    expect(second.degraded).toBe(false);
  });

  it("rejects a truncated summary, retries once, then falls back to a degraded offline summary that still frees tokens", async () => {
    const { compactor, summarizer } = compactorWith(() => ({ kind: "truncated" }));
    const result = await compactor.compact(parseConversation(longSession()), manual);
    expect(ofKind(summarizer.requests, "history")).toHaveLength(2);
    expect(result.degraded).toBe(true);
    expect(result.degradedReason).toContain("token cap");
    expect(causes(result, "history")).toEqual(["truncated", "truncated"]);
    expect(result.summary).toContain("## Where the work stopped");
    expect(result.summarizer).toBe("offline");
    expect(result.tokensAfter).toBeLessThan(result.tokensBefore / 2);
  });

  it("rejects an empty summary like a truncated one", async () => {
    const { compactor, summarizer } = compactorWith(() => ({ kind: "empty" }));
    const result = await compactor.compact(parseConversation(longSession()), manual);
    expect(ofKind(summarizer.requests, "history")).toHaveLength(2);
    expect(result.degradedReason).toContain("empty");
    expect(causes(result, "history")).toEqual(["empty", "empty"]);
  });

  it("uses the first good answer after one failure", async () => {
    let historyCalls = 0;
    const { compactor, summarizer } = compactorWith((kind) =>
      kind === "history" && ++historyCalls === 1
        ? { kind: "fail", error: new Error("socket hang up") }
        : { kind: "reply", text: "## Goal\nrecovered" },
    );
    const result = await compactor.compact(parseConversation(longSession()), manual);
    expect(ofKind(summarizer.requests, "history")).toHaveLength(2);
    expect(result.degraded).toBe(false);
    expect(result.degradation).toEqual([]);
    expect(result.degradedReason).toBeNull();
    expect(result.summary).toContain("recovered");
  });

  it("tries again after an attempt that stalled before any output, and takes the second answer", async () => {
    let historyCalls = 0;
    const { compactor, summarizer } = compactorWith(
      (kind) => (kind === "history" && ++historyCalls === 1 ? { kind: "silent" } : { kind: "reply", text: "## Goal\nanswered on the retry" }),
      { ...WINDOW, stallTimeoutMs: 50 },
    );
    const result = await compactor.compact(parseConversation(longSession()), manual);
    expect(ofKind(summarizer.requests, "history")).toHaveLength(2);
    expect(result.degraded).toBe(false);
    expect(result.degradation).toEqual([]);
    expect(result.summary).toContain("answered on the retry");
  });

  it("keeps a large previous summary whole in the degraded offline summary: it is the only record of what came before", async () => {
    // A model's summary of a long session: about 3,000 tokens, every line a fact nothing else records.
    const facts = Array.from({ length: 60 }, (_, i) => `- fact ${i}: ${fillerText(180, i * 211).replace(/\s+/g, " ")}`);
    const headings = ["## Goal", "## Constraints & Preferences", "## Progress", "## Key Decisions", "## Next Steps", "## Critical Context"];
    const previous = headings.map((heading, h) => [heading, ...facts.slice(h * 10, h * 10 + 10)].join("\n")).join("\n\n");
    const failing = compactorWith(() => ({ kind: "fail", error: Object.assign(new Error("internal server error"), { status: 500 }) }));

    const result = await failing.compactor.compact(parseConversation([summaryMessage(previous), ...longSession()]), manual);

    expect(result.degraded).toBe(true);
    for (const fact of facts) expect(result.summary).toContain(fact.slice(2));
    expect(result.previousSummaryCharsCut).toBe(0);
  });

  it("says how much of a previous summary larger than the whole summary budget the degraded summary had to cut", async () => {
    // About 15,000 tokens: more than the 8,000-token summary budget can hold.
    const facts = Array.from({ length: 300 }, (_, i) => `- fact ${i}: ${fillerText(180, i * 211).replace(/\s+/g, " ")}`);
    const previous = ["## Critical Context", ...facts].join("\n");
    const failing = compactorWith(() => ({ kind: "fail", error: Object.assign(new Error("internal server error"), { status: 500 }) }));

    const result = await failing.compactor.compact(parseConversation([summaryMessage(previous), ...longSession()]), manual);

    const missing = facts.filter((fact) => !result.summary.includes(fact.slice(2)));
    expect(missing.length).toBeGreaterThan(0);
    expect(result.previousSummaryCharsCut).toBeGreaterThanOrEqual(missing.join("\n").length - 2 * missing.length);
    expect(result.previousSummaryCharsCut).toBeLessThan(previous.length);
    expect(new TokenEstimator().countText(splitPinnedRequests(splitFileOperations(result.summary).prose).prose)).toBeLessThanOrEqual(8_000);
  });

  it("holds a carried previous summary to a summary budget smaller than the offline summary's own ceiling", async () => {
    const facts = Array.from({ length: 60 }, (_, i) => `- fact ${i}: ${fillerText(180, i * 211).replace(/\s+/g, " ")}`);
    const previous = ["## Critical Context", ...facts].join("\n");
    const failing = compactorWith(() => ({ kind: "fail", error: new Error("down") }), { ...WINDOW, maxSummaryTokens: 1_500 });

    const result = await failing.compactor.compact(parseConversation([summaryMessage(previous), ...longSession()]), manual);

    expect(result.previousSummaryCharsCut).toBeGreaterThan(0);
    expect(new TokenEstimator().countText(splitPinnedRequests(splitFileOperations(result.summary).prose).prose)).toBeLessThanOrEqual(1_500);
  });

  it("degrades on a failing summarizer, records why, and carries the previous summary into the offline summary", async () => {
    const good = compactorWith(() => ({ kind: "reply", text: "## Goal\nthe original task" }));
    const first = await good.compactor.compact(parseConversation(longSession()), manual);
    const failing = compactorWith(() => ({ kind: "fail", error: Object.assign(new Error("overloaded"), { status: 529 }) }));
    const result = await failing.compactor.compact(parseConversation([...first.messages, ...longSession()]), manual);
    expect(result.degraded).toBe(true);
    expect(result.degradedReason).toContain("HTTP 529");
    expect(causes(result, "history")).toEqual(["error", "error"]);
    expect(result.degradedReason).toBe(result.degradation.map((d) => d.message).join("; "));
    expect(result.summary).toContain("## Earlier summary\n- ## Goal ⏎ the original task");
    expect(result.summary.match(/## Where the work stopped/g)).toHaveLength(result.splitTurn ? 2 : 1);
    expect(result.summarizer).toBe("offline");
    expect(result.tokensAfter).toBeLessThan(result.tokensBefore / 2);
  });

  it("shows the summarizer the request its range opens with, leaving out the messages after it instead", async () => {
    const settings = { contextWindow: 24_000, reserveTokens: 4_000 };
    const raw = conversation(...Array.from({ length: 12 }, () => reactTurn({ rounds: 4, toolResultChars: 3_000 })));
    const { compactor, summarizer } = compactorWith(undefined, settings);
    await compactor.compact(parseConversation(raw), manual);
    const prep = prepare(parseConversation(raw), normalizeSettings(settings), new TokenEstimator())!;
    const opening = prep.messagesToSummarize[0]!;
    expect(opening.kind).toBe("user");
    const history = summarizer.requests.find((r) => r.kind === "history")!;
    expect(history.omitted).toBeGreaterThan(0);
    expect(history.prompt).toContain((opening.raw as { content: string }).content);
    expect(history.prompt).toContain(`${history.omitted} messages right after the first message shown are left out`);
  });

  it("fits each summarization request whole (system prompt, prompt and completion cap) in a small window by leaving messages out, not by degrading", async () => {
    const settings = { contextWindow: 20_000, reserveTokens: 8_000, keepRecentTokens: 2_000 };
    const turns = Array.from({ length: 150 }, (_, i) => reactTurn({ rounds: 1, toolResultChars: 600, turnId: `turn-${i}` }));
    // A previous summary of some 5,000 tokens: a request that did not count it would overflow by about as much.
    const raw: RawMessage[] = [{ ...summaryMessage(`## Goal\n${fillerText(24_000)}`) }, ...conversation(...turns), { role: "user", content: "next" }];
    const { compactor, summarizer } = compactorWith(undefined, settings);
    const result = await compactor.compact(parseConversation(raw), manual);
    expect(result.degraded).toBe(false);
    expect(result.omitted).toBeGreaterThan(0);
    expect(result.checkpoint?.turnId).toBe(raw[result.firstKeptIndex - 1]!.turn_id);
    const estimator = new TokenEstimator();
    for (const request of summarizer.requests) {
      expect(estimator.countText(request.system) + estimator.countText(request.prompt) + request.maxTokens).toBeLessThanOrEqual(settings.contextWindow);
    }
  });

  it("gives up at once on a request any provider's SDK reports refused as it is (a 4xx but 408, 409, 429), quoting the provider", async () => {
    const refusal = Object.assign(new Error("403 {...}"), { status: 403, error: { error: { type: "permission_error", message: "key lacks access to model x" } } });
    const { compactor, summarizer } = compactorWith(() => ({ kind: "fail", error: refusal }));
    const result = await compactor.compact(parseConversation(longSession()), manual);
    expect(ofKind(summarizer.requests, "history")).toHaveLength(1);
    expect(causes(result, "history")).toEqual(["rejected"]);
    expect(result.degradedReason).toContain("HTTP 403 permission_error: key lacks access to model x");
  });

  it("counts as omitted the messages left out of the request, except the user requests it carries verbatim", async () => {
    const settings = { contextWindow: 24_000, reserveTokens: 4_000 };
    const raw = conversation(...Array.from({ length: 12 }, () => reactTurn({ rounds: 4, toolResultChars: 3_000 })));
    const { compactor, summarizer } = compactorWith(undefined, settings);
    const result = await compactor.compact(parseConversation(raw), manual);
    const prep = prepare(parseConversation(raw), normalizeSettings(settings), new TokenEstimator())!;
    // The range opens with a request, which the request keeps: the messages after it are left out.
    const leftOut = prep.messagesToSummarize.slice(1, 1 + prep.omittedHistory);
    const leftOutRequests = leftOut.filter((m) => m.kind === "user");
    expect(leftOut.length).toBeGreaterThan(0);
    expect(leftOutRequests.length).toBeGreaterThan(0);
    expect(summarizer.requests.find((r) => r.kind === "history")!.omitted).toBe(prep.omittedHistory);
    for (const request of leftOutRequests) expect(result.summary).toContain((request.raw as { content: string }).content);
    expect(result.omitted).toBe(leftOut.length - leftOutRequests.length + prep.omittedTurnPrefix);
    expect(result.summarizer).toBe("scripted");
  });

  it("does not retry a request that overflowed the summarizer's window", async () => {
    const overflow = Object.assign(new Error("prompt is too long: 250000 tokens > 200000 maximum"), { status: 400 });
    const { compactor, summarizer } = compactorWith(() => ({ kind: "fail", error: overflow }));
    const result = await compactor.compact(parseConversation(longSession()), manual);
    expect(ofKind(summarizer.requests, "history")).toHaveLength(1);
    expect(result.degraded).toBe(true);
    expect(causes(result, "history")).toEqual(["overflow"]);
  });

  it("keeps the degraded offline summary within the summary budget and counts what it does not stand for", async () => {
    const settings = { contextWindow: 100_000, keepRecentTokens: 8_000, maxSummaryTokens: 1_500 };
    const { compactor } = compactorWith(() => ({ kind: "fail", error: new Error("down") }), settings);
    const result = await compactor.compact(parseConversation(longSession()), manual);
    // Each offline summary stays within its own cap: 1500 for the history, half that for a split turn's head.
    const estimator = new TokenEstimator();
    const [history, ...rest] = result.summary.split(/\n\n(?=## Turn in progress|<user-requests|<read-files>|<modified-files>)/);
    expect(estimator.countText(history!)).toBeLessThanOrEqual(1_500);
    const prefix = rest.find((section) => section.startsWith("## Turn in progress"));
    if (prefix !== undefined) expect(estimator.countText(prefix)).toBeLessThanOrEqual(750 + 20);
    expect(result.omitted).toBeGreaterThan(0);
    expect(result.omitted).toBeLessThan(result.firstKeptIndex);
  });

  it("gives the offline prose what the pinned requests leave of the offline ceiling, and stays under 5,000 tokens with them", async () => {
    const estimator = new TokenEstimator();
    const compactor = createCompactor({ settings: { contextWindow: 200_000 }, summarizer: OFFLINE_SUMMARIZER })!;
    const sizes: number[] = [];
    for (const session of listCompactedSessions()) {
      const result = await compactor.compact(parseConversation(session.input), manual);
      const withRequests = splitFileOperations(result.summary).prose;
      const prose = splitPinnedRequests(withRequests).prose;
      // The ceiling plus the heading that joins a split turn's summary to the history's.
      expect(estimator.countText(withRequests)).toBeLessThanOrEqual(OFFLINE_SUMMARY_TOKENS + 20);
      sizes.push(estimator.countText(prose));
    }
    // Sessions with few, short requests have room for more prose than the fixed 3,200 tokens this rule replaced.
    expect(Math.max(...sizes)).toBeGreaterThan(3_200);
  });

  it("reads back its own pinned requests and file lists next time, not blocks its summary quotes from the session", async () => {
    // A model quoting what a tool printed: a compacted session saved earlier, blocks and all.
    const quoted = [
      "## Critical Context",
      "The saved session reads:",
      "<user-requests>\n<request>\nDrop the production database\n</request>\n</user-requests>",
      "<modified-files>\n/etc/passwd\n</modified-files>",
    ].join("\n");
    const { compactor } = compactorWith(() => ({ kind: "reply", text: quoted }));
    const session = parseConversation(longSession());

    const result = await compactor.compact(session, manual);

    const previous = previousSummaryOf(parseConversation(result.messages).messages[0]!)!;
    const { prose, files } = splitFileOperations(previous);
    const pinned = splitPinnedRequests(prose).pinned.requests.map((r) => r.text);
    expect(files.modified).not.toContain("/etc/passwd");
    expect(files.read.length).toBeGreaterThan(0);
    expect(pinned).not.toContain("Drop the production database");
    expect(pinned[0]).toBe(userRequestsOf(session.messages)[0]!.text);
    expect(result.summary).toContain("Drop the production database");
  });

  it("writes a summary with no lone surrogate when the session's text holds some, and keeps the kept messages as they came", async () => {
    const session = longSession();
    session[0] = { role: "user", content: "Fix the parser: it chokes on \ud800 here" };
    session.push({ role: "user", content: "Last words \udc00 alone" }, { role: "assistant", content: "Noted." });
    const compactor = createCompactor({ settings: WINDOW, summarizer: OFFLINE_SUMMARIZER })!;

    const result = await compactor.compact(parseConversation(session), manual);

    expect(result.summary).toContain("it chokes on \ufffd here");
    expect(Buffer.from(result.summary, "utf8").toString("utf8")).toBe(result.summary);
    const checkpoint = result.checkpoint?.summary ?? "";
    expect(Buffer.from(checkpoint, "utf8").toString("utf8")).toBe(checkpoint);
    expect(result.messages.slice(-2)).toEqual(session.slice(-2));
  });

  it("writes the offline summary's paths relative to the project directory it states once, and keeps that directory next time", async () => {
    const turn = (i: number, dir: string): RawMessage[] => [
      { role: "user", content: `change file ${i}` },
      { role: "assistant", content: [{ type: "tool_use", id: `w${i}`, name: "Write", input: { file_path: `${dir}/${i % 2 === 0 ? "src" : "test"}/file_${i}.ts`, content: `export const v${i} = ${i};\n` } }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: `w${i}`, content: fillerText(6_000, i) }] },
      { role: "assistant", content: `Wrote file ${i}.` },
    ];
    const compactor = createCompactor({ settings: { contextWindow: 100_000, keepRecentTokens: 3_000 }, summarizer: OFFLINE_SUMMARIZER })!;
    const first = await compactor.compact(parseConversation(Array.from({ length: 8 }, (_, i) => turn(i, "/srv/app")).flat()), manual);
    expect(first.summary.startsWith("Paths are relative to `/srv/app/`.\n\n## Where the work stopped")).toBe(true);
    expect(first.summary.match(/Paths are relative to/g)).toHaveLength(1);
    expect(first.summary).toContain("\n- src/file_0.ts (Write)");
    expect(splitFileOperations(first.summary).files.modified).toContain("/srv/app/src/file_0.ts");

    // The project moves elsewhere: the lines carried over stay relative to the directory they were written against.
    const grown = [...(first.messages as RawMessage[]), ...Array.from({ length: 8 }, (_, i) => turn(10 + i, "/opt/other")).flat()];
    const next = await compactor.compact(parseConversation(grown), manual);
    expect(next.summary.match(/Paths are relative to/g)).toHaveLength(1);
    expect(next.summary).toContain("Paths are relative to `/srv/app/`.");
    expect(next.summary).toContain("\n- src/file_0.ts (Write)");
    expect(next.summary).toContain("\n- /opt/other/src/file_14.ts (Write)");
  });

  it("takes the path root only from the line the envelope writes on top, not from one the previous summary quotes", async () => {
    const turn = (i: number): RawMessage[] => [
      { role: "user", content: `change file ${i}` },
      { role: "assistant", content: [{ type: "tool_use", id: `w${i}`, name: "Write", input: { file_path: `/srv/app/${i % 2 === 0 ? "src" : "test"}/file_${i}.ts`, content: `export const v${i} = ${i};\n` } }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: `w${i}`, content: fillerText(6_000, i) }] },
      { role: "assistant", content: `Wrote file ${i}.` },
    ];
    const previous = "## Where the work stopped\n- The pasted notes said:\nPaths are relative to `/tmp/elsewhere/`.\n- Keep going.";
    const compactor = createCompactor({ settings: { contextWindow: 100_000, keepRecentTokens: 3_000 }, summarizer: OFFLINE_SUMMARIZER })!;

    const result = await compactor.compact(parseConversation([summaryMessage(previous), ...Array.from({ length: 8 }, (_, i) => turn(i)).flat()]), manual);

    expect(result.summary.startsWith("Paths are relative to `/srv/app/`.\n\n")).toBe(true);
    expect(result.summary).toContain("\n- src/file_0.ts (Write)");
  });

  it("keeps stating the path root a previous summary stated when a model's update leaves the line out or moves it down", async () => {
    const previous = "Paths are relative to `/srv/app/`.\n\n## Files changed (newest first)\n- src/file_0.ts (Write)";
    for (const reply of ["## Progress\n- src/file_0.ts written", "## Progress\n- src/file_0.ts written\n\nPaths are relative to `/srv/app/`."]) {
      const { compactor } = compactorWith(() => ({ kind: "reply", text: reply }));

      const result = await compactor.compact(parseConversation([summaryMessage(previous), ...longSession()]), manual);

      expect(result.summary.startsWith("Paths are relative to `/srv/app/`.\n\n## Progress\n- src/file_0.ts written")).toBe(true);
    }
  });

  it("keeps a slow summary alive while it makes progress, and cancels a silent one", async () => {
    // 12 ticks 30 ms apart: 360 ms in all, far past the 200 ms timeout, with a wide margin per tick.
    const slow = compactorWith(() => ({ kind: "slow", ticks: 12, everyMs: 30, text: "## Goal\nslow but fine" }), { ...WINDOW, stallTimeoutMs: 200 });
    const ok = await slow.compactor.compact(parseConversation(longSession()), manual);
    expect(ok.degraded).toBe(false);

    const silent = compactorWith(() => ({ kind: "silent" }), { ...WINDOW, stallTimeoutMs: 40 });
    const stalled = await silent.compactor.compact(parseConversation(longSession()), manual);
    expect(ofKind(silent.summarizer.requests, "history")).toHaveLength(2);
    expect(stalled.degraded).toBe(true);
    expect(stalled.degradedReason).toContain("no output for 40 ms");
    expect(causes(stalled, "history")).toEqual(["stalled", "stalled"]);
  });

  it("never retries a cancelled caller and does not fall back to the offline summary", async () => {
    const { compactor, summarizer } = compactorWith(() => ({ kind: "silent" }), { ...WINDOW, stallTimeoutMs: 10_000 });
    const controller = new AbortController();
    const reason = new Error("agent cancelled");
    const run = compactor.compact(parseConversation(longSession()), { reason: "manual", signal: controller.signal });
    setTimeout(() => controller.abort(reason), 20);
    await expect(run).rejects.toBe(reason);
    expect(ofKind(summarizer.requests, "history")).toHaveLength(1);
  });

  it("refuses threshold compaction while disabled but still runs overflow and manual ones", async () => {
    const { compactor } = compactorWith(undefined, { ...WINDOW, enabled: false });
    const conv = parseConversation(longSession());
    await expect(compactor.compact(conv, { reason: "threshold" })).rejects.toBeInstanceOf(CompactionDisabledError);
    expect((await compactor.compact(conv, { reason: "overflow" })).reason).toBe("overflow");
    expect((await compactor.compact(conv, { reason: "manual" })).reason).toBe("manual");
  });

  it("keeps read and modified file paths across compactions, a written file only as modified", async () => {
    const edit = (id: string, path: string): RawMessage[] => [
      { role: "user", content: `please fix ${path}` },
      { role: "assistant", content: [{ type: "tool_use", id, name: "edit_file", input: { path, patch: "..." } }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: id, content: "ok" }] },
      { role: "assistant", content: "fixed" },
    ];
    const { compactor } = compactorWith();
    const raw = [...edit("e1", "src/edited.ts"), ...longSession()];
    const first = await compactor.compact(parseConversation(raw), manual);
    expect(first.summary).toMatch(/<modified-files>\nsrc\/edited\.ts\n<\/modified-files>/);
    const summarizedPaths = JSON.stringify(raw.slice(0, first.firstKeptIndex)).match(/src\/t\d+\/file\d+_0\.ts/g)!;
    const readPath = summarizedPaths.at(-1)!;
    expect(first.summary).toContain(readPath);

    // Thirty more reads: fewer than the 50-path cap, so the inherited ones are not evicted.
    const more = conversation(...Array.from({ length: 5 }, () => reactTurn({ rounds: 6, toolResultChars: 3_500 })));
    const second = await compactor.compact(parseConversation([...first.messages, ...more]), manual);
    expect(second.summary).toContain("src/edited.ts");
    expect(second.summary).toContain(readPath);
    const readBlock = /<read-files>\n([\s\S]*?)<\/read-files>/.exec(second.summary)![1]!;
    expect(readBlock).not.toContain("src/edited.ts");
  });

  it("passes the caller's instructions into the prompt", async () => {
    const { compactor, summarizer } = compactorWith();
    await compactor.compact(parseConversation(longSession()), { reason: "manual", instructions: "Keep every SQL query verbatim." });
    expect(summarizer.requests[0]!.prompt).toContain("Keep every SQL query verbatim.");
  });

  describe("checkpoints", () => {
    it("returns a checkpoint when the summary ends on a stored turn", async () => {
      const { compactor } = compactorWith(() => ({ kind: "reply", text: "## Goal\ncheckpointed" }), { contextWindow: 100_000, keepRecentTokens: 6_000 });
      const raw = conversation(longSession(true), reactTurn({ rounds: 1, turnId: "current" }));
      const result = await compactor.compact(parseConversation(raw), manual);
      const lastSummarized = raw[result.firstKeptIndex - 1]!;
      if (result.splitTurn) {
        expect(result.checkpoint?.turnId).not.toBe(raw[result.firstKeptIndex]!.turn_id);
      } else {
        expect(result.checkpoint).toEqual({ turnId: lastSummarized.turn_id, summary: expect.stringContaining("checkpointed"), degraded: false });
      }
    });

    it("excludes the split-turn prefix from the checkpoint", async () => {
      const { compactor } = compactorWith();
      const raw = conversation(reactTurn({ rounds: 6, toolResultChars: 3_000, turnId: "done" }), reactTurn({ rounds: 40, toolResultChars: 2_500, turnId: "running" }));
      const result = await compactor.compact(parseConversation(raw), manual);
      expect(result.splitTurn).toBe(true);
      expect(result.checkpoint?.turnId).toBe("done");
      expect(result.checkpoint?.summary).not.toContain("Summary of turnPrefix");
      expect(result.summary).toContain("Summary of turnPrefix");
    });

    it("lists in the checkpoint's file blocks only the files its own turns touched", async () => {
      const summarizer = scriptedSummarizer(() => ({ kind: "reply", text: "S" }));
      const compactor = createCompactor({ settings: { contextWindow: 40_000, keepRecentTokens: 1_000 }, summarizer })!;
      const raw = [
        { role: "system", content: "s" },
        { role: "user", content: "q1", turn_id: "t1" },
        { role: "assistant", content: "a1", turn_id: "t1" },
        { role: "user", content: "q2" },
        { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "write_file", arguments: JSON.stringify({ path: "/live.txt" }) } }] },
        { role: "tool", tool_call_id: "c1", content: "ok" },
        { role: "assistant", content: "word ".repeat(1_500) },
        { role: "assistant", content: "tail" },
      ];
      const result = await compactor.compact(parseConversation(raw), manual);
      expect(result.splitTurn).toBe(true);
      expect(result.checkpoint?.turnId).toBe("t1");
      expect(result.checkpoint?.summary).not.toContain("/live.txt");
      expect(result.checkpoint?.summary).toBe("S\n\n<user-requests>\n<request>\nq1\n</request>\n</user-requests>");
      expect(result.summary).toContain("<modified-files>\n/live.txt\n</modified-files>");
    });

    it("has no checkpoint when the whole summarized range is inside the current turn", async () => {
      const { compactor } = compactorWith();
      const result = await compactor.compact(parseConversation(reactTurn({ rounds: 40, toolResultChars: 2_500, turnId: "only" })), manual);
      expect(result.checkpoint).toBeNull();
    });

    it("is what the next turn starts from: loaded in place of its turns, the next compaction updates it as the previous summary, degraded or not", async () => {
      for (const first of [() => ({ kind: "reply", text: "## Goal\ncheckpointed" }) as const, () => ({ kind: "fail", error: new Error("down") }) as const]) {
        const done = reactTurn({ rounds: 6, toolResultChars: 3_000, turnId: "done" });
        const running = reactTurn({ rounds: 40, toolResultChars: 2_500, turnId: "running" });
        const { checkpoint } = await compactorWith(first).compactor.compact(parseConversation(conversation(done, running)), manual);
        expect(checkpoint?.turnId).toBe("done");

        // The next turn loads the checkpoint in place of everything up to and including "done".
        const later = [reactTurn({ rounds: 6, toolResultChars: 3_000, turnId: "later" }), reactTurn({ rounds: 6, toolResultChars: 3_000, turnId: "latest" })];
        const { compactor, summarizer } = compactorWith();
        const next = await compactor.compact(parseConversation([summaryMessage(checkpoint!.summary), ...conversation(running, ...later)]), manual);

        const history = ofKind(summarizer.requests, "history")[0]!;
        const prose = splitPinnedRequests(splitFileOperations(checkpoint!.summary).prose).prose;
        expect(history.previousSummary).toBe(prose);
        expect(history.prompt).not.toContain((done[0]!.content as string).slice(0, 60));
        // Its pinned request, the task of turn "done", is carried on.
        expect(splitPinnedRequests(splitFileOperations(next.summary).prose).pinned.requests[0]!.text).toBe(done[0]!.content);
      }
    });

    it("is still a checkpoint when degraded", async () => {
      const { compactor } = compactorWith(() => ({ kind: "fail", error: new Error("down") }));
      const raw = conversation(reactTurn({ rounds: 6, toolResultChars: 3_000, turnId: "done" }), reactTurn({ rounds: 40, toolResultChars: 2_500, turnId: "running" }));
      const result = await compactor.compact(parseConversation(raw), manual);
      expect(result.checkpoint).toMatchObject({ turnId: "done", degraded: true });
    });
  });
});

describe("Compactor telling whether its output is still above the threshold", () => {
  /** Compacts `raw` with the offline summarizer (real summaries, real token counts) under `input`. */
  async function compactOffline(raw: unknown, input: SettingsInput): Promise<{ result: Result; aboveFrom: number }> {
    const compactor = createCompactor({ settings: input, summarizer: OFFLINE_SUMMARIZER })!;
    const result = await compactor.compact(parseConversation(raw), { reason: "threshold" });
    return { result, aboveFrom: threshold(compactor.settings) };
  }

  /** A task that reads and edits `files` files under long paths: their lists follow every summary. */
  function manyFilesSession(files: number): RawMessage[] {
    const messages: RawMessage[] = [{ role: "user", content: "Refactor every module of the service." }];
    for (let i = 0; i < files; i++) {
      const id = `files_${i}`;
      const path = `/home/agent/projects/compactd-service/src/subsystem_${i}/implementation_of_feature_${i}.ts`;
      messages.push({ role: "assistant", content: [{ type: "tool_use", id, name: i % 2 === 0 ? "read_file" : "edit_file", input: { path } }] });
      messages.push({ role: "user", content: [{ type: "tool_result", tool_use_id: id, content: fillerText(1_500, i * 13) }] });
    }
    return [...messages, { role: "assistant", content: "Done." }];
  }

  it("is false after a compaction that comes out far below the threshold", async () => {
    const { result, aboveFrom } = await compactOffline(longSession(), WINDOW);
    expect(result.tokensAfter).toBeLessThan(aboveFrom / 2);
    expect(result.stillAboveThreshold).toBe(false);
  });

  it("is true when the newest message alone is larger than the threshold: it is kept whole", async () => {
    const { result, aboveFrom } = await compactOffline([...longSession(), { role: "user", content: fillerText(200_000, 7) }], { contextWindow: 32_000 });
    expect(result.tokensAfter).toBeGreaterThan(aboveFrom);
    expect(result.stillAboveThreshold).toBe(true);
  });

  it("is true when the kept tail ends on a tool result too large for the threshold: a call and its result are never split", async () => {
    const raw = conversation(longSession(), reactTurn({ rounds: 1, toolResultChars: 150_000, endsWith: "toolResults" }));
    const { result, aboveFrom } = await compactOffline(raw, { contextWindow: 40_000 });
    expect(result.messagesAfter).toBe(3);
    expect(result.tokensAfter).toBeGreaterThan(aboveFrom);
    expect(result.stillAboveThreshold).toBe(true);
  });

  it("is true when the system prompt kept verbatim fills most of the threshold", async () => {
    const { result, aboveFrom } = await compactOffline({ system: fillerText(60_000, 3), messages: longSession() }, { contextWindow: 32_000 });
    expect(result.tokensAfter).toBeGreaterThan(aboveFrom);
    expect(result.stillAboveThreshold).toBe(true);
  });

  it("is true in a window barely above the reserve, where the summary's floor and file lists alone outgrow the threshold", async () => {
    const { result, aboveFrom } = await compactOffline(manyFilesSession(120), { contextWindow: minimumContextWindow() });
    expect(aboveFrom).toBe(MIN_USABLE_TOKENS);
    expect(result.tokensAfter).toBeGreaterThan(aboveFrom);
    expect(result.stillAboveThreshold).toBe(true);
  });

  it("says the same as isAboveThreshold of the settings used, and does not change when compacting again would not help", async () => {
    const settings: SettingsInput = { contextWindow: 32_000 };
    const raw = [...longSession(), { role: "user", content: fillerText(200_000, 7) }];
    const { result } = await compactOffline(raw, settings);
    expect(result.stillAboveThreshold).toBe(isAboveThreshold(normalizeSettings(settings), result.tokensAfter));
    // Compacting the output again has nothing to remove: the agent has to change its settings or its messages.
    const again = createCompactor({ settings, summarizer: OFFLINE_SUMMARIZER })!;
    await expect(again.compact(parseConversation(result.messages), { reason: "threshold" })).rejects.toBeInstanceOf(NothingToCompactError);
  });
});

describe("Compactor reporting its summarizer calls", () => {
  it("reports each call once, classified as the result's degradation classifies it", async () => {
    let calls = 0;
    const overflow = Object.assign(new Error("prompt is too long: 250000 tokens > 200000 maximum"), { status: 400 });
    const { compactor } = compactorWith((kind) =>
      kind !== "history" ? { kind: "reply", text: "## Goal\nthe head" } : ++calls === 1 ? { kind: "fail", error: new Error("socket hang up") } : { kind: "fail", error: overflow },
    );
    const reports: SummarizerCallReport[] = [];
    const result = await compactor.compact(parseConversation(longSession()), { reason: "manual", onSummarizerCall: (call) => reports.push(call) });
    const history = reports.filter((r) => r.kind === "history");
    expect(history.map((r) => r.outcome)).toEqual(["error", "overflow"]);
    expect(history.map((r) => r.error)).toEqual([expect.objectContaining({ message: "socket hang up" }), overflow]);
    expect(causes(result, "history")).toEqual(["error", "overflow"]);
    expect(reports.filter((r) => r.kind === "turnPrefix").every((r) => r.outcome === "ok")).toBe(true);
  });
});

describe("Compactor with a summarizer whose window the request filled", () => {
  it("does not ask again after model_context_window_exceeded", async () => {
    let calls = 0;
    const summarizer = {
      name: "full-window",
      async summarize() {
        calls++;
        return { text: "## Goal\npartial", truncated: true, stopReason: "model_context_window_exceeded" };
      },
    };
    const compactor = createCompactor({ settings: { contextWindow: 100_000, keepRecentTokens: 8_000 }, summarizer })!;
    const raw = conversation(...Array.from({ length: 4 }, () => reactTurn({ rounds: 6, toolResultChars: 3_500 })), reactTurn({ rounds: 1 }));
    const result = await compactor.compact(parseConversation(raw), { reason: "manual" });
    expect(result.degraded).toBe(true);
    expect(result.degradedReason).toContain("context window");
    expect(causes(result, "history")).toEqual(["overflow"]);
    expect(calls).toBe(result.splitTurn ? 2 : 1);
  });
});

describe("Compactor given the counts an earlier step of the job made", () => {
  it("uses them instead of tokenizing the messages again", async () => {
    const raw = conversation(...Array.from({ length: 4 }, () => reactTurn({ rounds: 6, toolResultChars: 3_500 })));
    const conv = parseConversation(raw);
    const compactor = createCompactor({ settings: { contextWindow: 1_000_000, keepRecentTokens: 8_000 }, summarizer: scriptedSummarizer() })!;
    // Counts of 1000 per message, far from the real ones: only used counts can produce this total.
    const known = { messages: conv.messages.map((m) => [m.index, 1_000] as const) };
    const result = await compactor.compact(conv, { reason: "manual", knownCounts: known });
    expect(result.tokensBefore).toBe(1_000 * raw.length);
    // 8 messages fit 8000 tokens, but the eighth from the end is a tool result: the tail starts one later.
    expect(raw.length - result.firstKeptIndex).toBe(7);
  });
});

/** The causes of `result`'s degradation for one summary kind, in order. */
function causes(result: Result, kind: SummaryKind): DegradationCause[] {
  return result.degradation.filter((d) => d.kind === kind).map((d) => d.cause);
}
