import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentEvent } from "../../examples/agentLoop.js";
import { runInProcessLoop } from "../../examples/inProcess.js";
import { SUMMARY_PREAMBLE } from "../../src/core/summaryEnvelope.js";
import { startFakeAnthropic, type FakeAnthropic } from "../helpers/fakeAnthropic.js";
import { CONTEXT_WINDOW, firstContent, isSummarization, prompt, promptsAroundCompaction, promptsRefusedAtTurnFive, scriptedModel } from "./agentScenario.js";

const model = scriptedModel();
let fake: FakeAnthropic;
beforeAll(async () => {
  fake = await startFakeAnthropic({ script: model.script });
});
afterAll(async () => {
  await fake.close();
});

function loop(prompts: AsyncIterable<string>, events: AgentEvent[]) {
  return runInProcessLoop(prompts, {
    anthropic: new Anthropic({ apiKey: "sk-test", baseURL: fake.url }),
    model: "claude-test",
    contextWindow: CONTEXT_WINDOW,
    onEvent: (event) => events.push(event),
  });
}

describe("examples/inProcess.ts", () => {
  it("summarizes in the background at the threshold and splices the result in behind the turn said meanwhile", async () => {
    model.slowSummaries = true;
    const events: AgentEvent[] = [];
    const user = promptsAroundCompaction(events, 1, "the summary is written");
    const messages = await loop(user.prompts, events);
    const startedBefore = user.startedBefore();

    expect(events.map((event) => event.kind)).toEqual(["compaction_started", "compaction_arrived", "compaction_applied"]);
    expect(events[2]).toMatchObject({ before: 2 * startedBefore! + 2 });
    expect(messages[0]!.content).toEqual(expect.stringContaining(SUMMARY_PREAMBLE));
    expect(messages.some((message) => message.content === prompt(startedBefore!))).toBe(true);
    expect(messages.slice(-2).map((message) => message.role)).toEqual(["user", "assistant"]);
    expect(fake.requests.some(isSummarization)).toBe(true);
  });

  it("compacts now and retries once when a request does not fit the window", async () => {
    model.slowSummaries = false;
    const events: AgentEvent[] = [];
    const messages = await loop(promptsRefusedAtTurnFive(model), events);

    expect(events.map((event) => event.kind)).toEqual(["blocked", "compaction_applied"]);
    const retried = fake.requests.filter((request) => !isSummarization(request)).at(-1)!;
    expect(firstContent(retried)).toEqual(expect.stringContaining(SUMMARY_PREAMBLE));
    expect(messages.at(-2)!.content).toBe(prompt(5));
  });

  it("compacts now and retries once when a reply comes back cut short by the context window", async () => {
    const events: AgentEvent[] = [];
    async function* prompts() {
      for (let turn = 0; turn < 6; turn++) {
        if (turn === 5) model.agentFaults = [{ kind: "reply", text: "Half an ans", stopReason: "model_context_window_exceeded" }];
        yield prompt(turn);
      }
    }
    const messages = await loop(prompts(), events);

    expect(events).toEqual([{ kind: "blocked", reason: "cut_short" }, expect.objectContaining({ kind: "compaction_applied" })]);
    expect(JSON.stringify(messages.at(-1)!.content)).not.toContain("Half an ans");
  });
});
