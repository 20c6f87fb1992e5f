import { describe, expect, it } from "vitest";
import { apply, keptMessages } from "../../src/core/apply.js";
import { parseConversation } from "../../src/core/formats/parseConversation.js";
import { prepare } from "../../src/core/prepare.js";
import { normalizeSettings } from "../../src/core/settings.js";
import { summaryMessage } from "../../src/core/summaryEnvelope.js";
import { TokenEstimator } from "../../src/core/tokenEstimator.js";
import { conversation, reactTurn } from "../helpers/conversations.js";

const settings = normalizeSettings({ contextWindow: 200_000, keepRecentTokens: 4_000 });

describe("prepare", () => {
  it("returns null for a small conversation that fits the keep-recent budget", () => {
    const conv = parseConversation(conversation(reactTurn({ rounds: 2 }), reactTurn({ rounds: 1 })));
    expect(prepare(conv, settings, new TokenEstimator())).toBeNull();
  });

  it("returns null when the last compaction left nothing outside the budget", () => {
    const conv = parseConversation([summaryMessage("## Goal\nearlier work"), ...reactTurn({ rounds: 3 })]);
    expect(prepare(conv, settings, new TokenEstimator())).toBeNull();
  });

  it("returns null without a context window: there is no budget to enforce, and every message would be left out of the summarizer's input", () => {
    const conv = parseConversation(conversation(...Array.from({ length: 4 }, () => reactTurn({ rounds: 6, toolResultChars: 3_500 }))));
    expect(prepare(conv, normalizeSettings({ keepRecentTokens: 4_000 }), new TokenEstimator())).toBeNull();
    expect(prepare(conv, normalizeSettings({ contextWindow: 200_000, keepRecentTokens: 4_000 }), new TokenEstimator())).not.toBeNull();
  });

  it("collects complete turns for the history and the head of a split turn separately", () => {
    const first = reactTurn({ rounds: 3, turnId: "t1" });
    const second = reactTurn({ rounds: 30, toolResultChars: 1_500, turnId: "t2" });
    const conv = parseConversation(conversation(first, second));
    const prep = prepare(conv, settings, new TokenEstimator())!;
    expect(prep.isSplitTurn).toBe(true);
    expect(prep.messagesToSummarize.map((m) => m.raw)).toEqual(first);
    expect(prep.turnPrefixMessages[0]!.raw).toBe(second[0]);
    expect(prep.turnPrefixMessages.length).toBe(prep.firstKeptIndex - first.length);
  });

  it("recognizes the previous summary by its envelope, keeps it out of the input and passes it on", () => {
    const conv = parseConversation([
      summaryMessage("## Goal\nport the parser\n\n<read-files>\nsrc/old.ts\n</read-files>"),
      ...conversation(...Array.from({ length: 3 }, () => reactTurn({ rounds: 6, toolResultChars: 2_000 }))),
    ]);
    const prep = prepare(conv, settings, new TokenEstimator())!;
    expect(prep.previousSummary).toBe("## Goal\nport the parser");
    expect(prep.messagesToSummarize[0]!.index).toBe(1);
    expect(prep.historyInput.transcript).not.toContain("port the parser");
    expect(prep.fileOperations.read).toContain("src/old.ts");
  });

  it("keeps the system prompt messages out of the summary and in front of it", () => {
    const raw = [
      { role: "system", content: "You are a careful agent." },
      { role: "developer", content: "Use tools." },
      ...conversation(...Array.from({ length: 3 }, () => reactTurn({ format: "openai", rounds: 8, toolResultChars: 2_000 }))),
    ];
    const conv = parseConversation(raw);
    const prep = prepare(conv, settings, new TokenEstimator())!;
    expect(prep.messagesToSummarize[0]!.index).toBe(2);
    const out = apply(keptMessages(conv.messages, prep), summaryMessage("S"));
    expect(out[0]).toBe(raw[0]);
    expect(out[1]).toBe(raw[1]);
    expect(out[2]).toEqual(summaryMessage("S"));
    expect(out.slice(3)).toEqual(raw.slice(prep.firstKeptIndex));
  });

  it("fits the summarizer input to the window, keeping the opening request and leaving out the messages after it, with an exact count", () => {
    const small = normalizeSettings({ contextWindow: 24_000, reserveTokens: 4_000 });
    const turns = Array.from({ length: 12 }, () => reactTurn({ rounds: 4, toolResultChars: 3_000 }));
    const conv = parseConversation(conversation(...turns));
    const estimator = new TokenEstimator();
    const prep = prepare(conv, small, estimator)!;
    expect(prep.omittedHistory).toBeGreaterThan(0);
    expect(prep.historyInput.leftOut).toBe("afterOpening");
    expect(prep.historyInput.messages.length + prep.omittedHistory).toBe(prep.messagesToSummarize.length);
    expect(prep.historyInput.messages[0]).toBe(prep.messagesToSummarize[0]);
    expect(prep.historyInput.messages[1]).toBe(prep.messagesToSummarize[1 + prep.omittedHistory]);
    const transcriptTokens = estimator.countText(prep.historyInput.transcript);
    expect(transcriptTokens).toBeLessThanOrEqual(small.contextWindow - prep.summaryTokens);
    // The paths of the omitted messages are still recorded.
    const omittedPaths = JSON.stringify(prep.messagesToSummarize.slice(1, 1 + prep.omittedHistory).map((m) => m.raw));
    const firstPath = /src\/t\d+\/file0_0\.ts/.exec(omittedPaths)![0];
    expect(prep.fileOperations.read).toContain(firstPath);
  });

  it("keeps the request a split turn opens with in the turn-prefix input when the turn's head does not fit", () => {
    const small = normalizeSettings({ contextWindow: 24_000, reserveTokens: 4_000, keepRecentTokens: 2_000 });
    const turn = reactTurn({ rounds: 40, toolResultChars: 2_500, requestChars: 400 });
    const prep = prepare(parseConversation(conversation(reactTurn({ rounds: 1 }), turn)), small, new TokenEstimator())!;
    expect(prep.isSplitTurn).toBe(true);
    expect(prep.omittedTurnPrefix).toBeGreaterThan(0);
    expect(prep.turnPrefixInput.messages[0]!.raw).toBe(turn[0]);
    expect(prep.turnPrefixInput.transcript).toContain((turn[0] as { content: string }).content);
  });

  it("records the file paths of the turn-prefix messages left out of its summarizer input", () => {
    const small = normalizeSettings({ contextWindow: 24_000, reserveTokens: 4_000, keepRecentTokens: 2_000 });
    const turn = reactTurn({ rounds: 40, toolResultChars: 2_500, requestChars: 400 });
    const prep = prepare(parseConversation(conversation(reactTurn({ rounds: 1 }), turn)), small, new TokenEstimator())!;
    expect(prep.omittedTurnPrefix).toBeGreaterThan(0);
    const leftOut = prep.turnPrefixMessages.filter((m) => !prep.turnPrefixInput.messages.includes(m));
    expect(leftOut).toHaveLength(prep.omittedTurnPrefix);
    const leftOutPaths = JSON.stringify(leftOut.map((m) => m.raw)).match(/src\/t\d+\/file\d+_0\.ts/g)!;
    expect(leftOutPaths.length).toBeGreaterThan(0);
    for (const path of leftOutPaths) expect(prep.fileOperations.read).toContain(path);
  });

  it("offers a checkpoint only when the history ends exactly on a stored turn", () => {
    const onBoundary = parseConversation(
      conversation(reactTurn({ rounds: 4, toolResultChars: 2_000, turnId: "a" }), reactTurn({ rounds: 4, toolResultChars: 2_000, turnId: "b" }), reactTurn({ rounds: 1, turnId: "c" })),
    );
    const prep = prepare(onBoundary, normalizeSettings({ contextWindow: 200_000, keepRecentTokens: 1_500 }), new TokenEstimator())!;
    const lastSummarized = prep.messagesToSummarize.at(-1)!;
    expect(prep.checkpointTurnId).toBe(lastSummarized.turnId);
    expect(onBoundary.messages[lastSummarized.index + 1]!.turnId).not.toBe(lastSummarized.turnId);
  });

  it("stops the checkpoint before a split turn, and offers none without turn ids", () => {
    const withIds = parseConversation(conversation(reactTurn({ rounds: 2, turnId: 1 }), reactTurn({ rounds: 30, toolResultChars: 1_500, turnId: 2 })));
    const prep = prepare(withIds, settings, new TokenEstimator())!;
    expect(prep.isSplitTurn).toBe(true);
    expect(prep.checkpointTurnId).toBe("1");
    const withoutIds = parseConversation(conversation(reactTurn({ rounds: 2 }), reactTurn({ rounds: 30, toolResultChars: 1_500 })));
    expect(prepare(withoutIds, settings, new TokenEstimator())!.checkpointTurnId).toBeUndefined();
  });

  it("offers no checkpoint when the history ends inside a stored turn", () => {
    // One stored turn holds two user requests; the cut between them is not a turn boundary.
    const raw = conversation(
      reactTurn({ rounds: 6, toolResultChars: 2_000, turnId: "same" }),
      reactTurn({ rounds: 6, toolResultChars: 2_000, turnId: "same" }),
    );
    const prep = prepare(parseConversation(raw), normalizeSettings({ contextWindow: 200_000, keepRecentTokens: 3_000 }), new TokenEstimator())!;
    expect(prep.messagesToSummarize.length).toBeGreaterThan(0);
    expect(prep.checkpointTurnId).toBeUndefined();
  });

  it("estimates tokensBefore within 5% of an exact count while tokenizing only part of a long conversation", () => {
    const raw = conversation(...Array.from({ length: 40 }, (_, i) => reactTurn({ rounds: 6, toolResultChars: 1_000 + (i % 5) * 700 })));
    const conv = parseConversation(raw);
    const estimator = new TokenEstimator();
    const prep = prepare(conv, normalizeSettings({ contextWindow: 400_000 }), estimator)!;
    const exact = new TokenEstimator();
    const exactTotal = conv.messages.reduce((s, m) => s + exact.count(m), 0);
    expect(Math.abs(prep.tokensBefore - exactTotal) / exactTotal).toBeLessThan(0.05);
    const counted = conv.messages.filter((m) => estimator.isCounted(m)).length;
    expect(counted).toBeLessThan(conv.messages.length / 2);
  });

  it("counts OpenAI system and developer messages exactly in tokensBefore, however unlike the head their text is", () => {
    // A system prompt in another script than the turns: priced at the head's ratio it was a fifth short.
    const system = { role: "system", content: "请用简体中文回答所有问题并保持简洁。".repeat(330) };
    const turns = Array.from({ length: 10 }, (_, i) => [
      { role: "user", content: `Step ${i}: ` + "describe the next part of the migration plan in detail ".repeat(75) },
      { role: "assistant", content: `Done with step ${i}.` },
    ]).flat();
    const conv = parseConversation({ messages: [system, ...turns] });
    const prep = prepare(conv, normalizeSettings({ contextWindow: 100_000, keepRecentTokens: 3_000 }), new TokenEstimator())!;
    const exact = new TokenEstimator();
    const systemTokens = exact.count(conv.messages[0]!);
    const exactTotal = conv.messages.reduce((s, m) => s + exact.count(m), 0);
    expect(systemTokens).toBeGreaterThan(exactTotal / 5);
    expect(Math.abs(prep.tokensBefore - exactTotal) / exactTotal).toBeLessThan(0.02);
  });

  it("scales every count to the provider's reported usage", () => {
    const raw = conversation(...Array.from({ length: 6 }, () => reactTurn({ rounds: 5, toolResultChars: 2_000 })));
    const plain = prepare(parseConversation(raw), settings, new TokenEstimator())!;
    const scaled = prepare(parseConversation(raw), settings, new TokenEstimator({ usageTokens: Math.round(plain.tokensBefore * 1.2) }))!;
    expect(scaled.tokensBefore).toBe(Math.round(plain.tokensBefore * 1.2));
    // Larger counts against the same budget keep fewer messages.
    expect(scaled.firstKeptIndex).toBeGreaterThanOrEqual(plain.firstKeptIndex);
  });
});

describe("prepare in two steps of one job", () => {
  it("tokenizes nothing again when the second step starts from the first step's counts", () => {
    const raw = { system: "Be brief.", messages: conversation(...Array.from({ length: 30 }, () => reactTurn({ rounds: 6, toolResultChars: 2_000 }))) };
    const inApi = parseConversation(raw);
    const first = new TokenEstimator();
    const decided = prepare(inApi, settings, first)!;
    const messagesCounted = inApi.messages.filter((m) => first.isCounted(m)).length;
    expect(messagesCounted).toBeGreaterThan(0);

    const inWorker = parseConversation(JSON.parse(JSON.stringify(raw))); // as the worker parses the stored payload
    const second = new TokenEstimator({ known: first.knownCounts(inApi) });
    const redone = prepare(inWorker, settings, second)!;
    expect(redone.firstKeptIndex).toBe(decided.firstKeptIndex);
    expect(redone.tokensBefore).toBe(decided.tokensBefore);
    // Messages, system prompt, calibration sample and the prompt's fixed text: nothing is tokenized again.
    expect(inWorker.messages.filter((m) => second.isCounted(m))).toHaveLength(messagesCounted);
    expect(second.tokenizedTexts).toBe(0);
  });
});
