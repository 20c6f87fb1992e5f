import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runAgentLoop, type AgentEvent } from "../../examples/agentLoop.js";
import { isOverflowError } from "../../src/client/index.js";
import { SUMMARY_PREAMBLE } from "../../src/core/summaryEnvelope.js";
import { startServiceUnderTest, type ServiceUnderTest } from "../client/serviceUnderTest.js";
import type { RecordedRequest } from "../helpers/fakeAnthropic.js";
import { TEST_TENANTS, TEST_WEBHOOK_SECRET } from "../helpers/serviceConfig.js";
import { fillerText } from "../helpers/conversations.js";
import { waitUntil } from "../helpers/waitUntil.js";
import { CONTEXT_WINDOW, firstContent, happened, isSummarization, prompt, promptsAroundCompaction, promptsRefusedAtTurnFive, scriptedModel } from "./agentScenario.js";

const model = scriptedModel();
const agentRequests = (): RecordedRequest[] => service.harness.fake.requests.filter((request) => !isSummarization(request));

let service: ServiceUnderTest;
beforeAll(async () => {
  service = await startServiceUnderTest("example-agent", { script: model.script });
});
afterAll(async () => {
  await service.close();
});

function loop(prompts: AsyncIterable<string> | Iterable<string>, events: AgentEvent[], system?: string) {
  return runAgentLoop(prompts, {
    anthropic: new Anthropic({ apiKey: "sk-test", baseURL: service.harness.fake.url }),
    model: "claude-test",
    contextWindow: CONTEXT_WINDOW,
    compactd: { baseUrl: service.url, apiKey: TEST_TENANTS.acme },
    webhookSecret: TEST_WEBHOOK_SECRET,
    ...(system !== undefined && { system }),
    onEvent: (event) => events.push(event),
  });
}

async function completedJobs(reason: string): Promise<number> {
  const metric = await service.harness.workerMetrics.registry.getSingleMetric("compactd_jobs_total")!.get();
  return metric.values.find((value) => value.labels.reason === reason && value.labels.outcome === "completed")?.value ?? 0;
}

describe("examples/agentLoop.ts", () => {
  it("compacts in the background at the threshold and splices the webhook's result in behind the turns said meanwhile", async () => {
    model.slowSummaries = true;
    const events: AgentEvent[] = [];
    const user = promptsAroundCompaction(events, 2, "the compaction's webhook arrives");
    const messages = await loop(user.prompts, events);
    const startedBefore = user.startedBefore();

    const started = events.find((event) => event.kind === "compaction_started");
    const applied = events.find((event) => event.kind === "compaction_applied");
    expect(started).toMatchObject({ messages: 2 * startedBefore! });
    expect((started as { contextTokens: number }).contextTokens).toBeGreaterThan(CONTEXT_WINDOW - 16_384);
    // Applied at the start of the turn after the one said meanwhile: that turn's two messages were kept.
    expect(applied).toMatchObject({ before: 2 * startedBefore! + 2 });
    expect(messages[0]!.content).toEqual(expect.stringContaining(SUMMARY_PREAMBLE));
    expect(messages.some((message) => message.content === prompt(startedBefore!))).toBe(true);
    expect(messages.some((message) => message.content === prompt(0))).toBe(false);
    expect(messages).toHaveLength((applied as { after: number }).after + 4);
    // The model saw the compacted conversation from then on.
    expect(firstContent(agentRequests().at(-1)!)).toEqual(expect.stringContaining(SUMMARY_PREAMBLE));
  });

  it("compacts with reason overflow and retries once when a request does not fit the window", async () => {
    model.slowSummaries = false;
    const events: AgentEvent[] = [];
    const overflowJobsBefore = await completedJobs("overflow");
    const messages = await loop(promptsRefusedAtTurnFive(model), events);

    expect(events.map((event) => event.kind)).toEqual(["blocked", "compaction_applied"]);
    expect(events[0]).toEqual({ kind: "blocked", reason: "overflow" });
    const [refused, retried] = agentRequests().slice(-2);
    expect((retried!.body.messages as unknown[]).length).toBeLessThan((refused!.body.messages as unknown[]).length);
    expect(firstContent(retried!)).toEqual(expect.stringContaining(SUMMARY_PREAMBLE));
    expect(await completedJobs("overflow")).toBe(overflowJobsBefore + 1);
    expect(messages.at(-2)!.content).toBe(prompt(5));
  });

  it("gives up with the provider's error when the retry overflows too", async () => {
    const events: AgentEvent[] = [];
    async function* prompts() {
      for (let turn = 0; turn < 6; turn++) {
        if (turn === 5) model.agentFaults = [{ kind: "overflow" }, { kind: "overflow" }];
        yield prompt(turn);
      }
    }
    const error = await loop(prompts(), events).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(isOverflowError(error)).toBe(true);
    expect(happened(events, "compaction_applied")).toBe(true);
  });

  it("stops compacting at the threshold once a result says it is still above it, instead of asking again every turn", async () => {
    model.slowSummaries = false;
    const events: AgentEvent[] = [];
    const count = (kind: AgentEvent["kind"]) => events.filter((event) => event.kind === kind).length;
    async function* prompts() {
      let turnsAfter = 0;
      for (let turn = 0; turn < 16; turn++) {
        // Each background compaction comes back before the next turn, which splices it in.
        await waitUntil(() => count("compaction_arrived") === count("compaction_started"), "the compaction's webhook arrives", 20_000);
        if (count("still_above_threshold") > 0 && turnsAfter++ === 4) return;
        yield prompt(turn);
      }
    }
    // About 12000 tokens of system prompt in a 30000-token window: kept verbatim, it leaves every compaction above the 13616-token threshold.
    await loop(prompts(), events, `You are a careful coding agent. House rules follow.\n${fillerText(48_000, 3)}`);

    const still = events.findIndex((event) => event.kind === "still_above_threshold");
    expect(still).toBeGreaterThan(0);
    expect((events[still] as { tokensAfter: number }).tokensAfter).toBeGreaterThan(CONTEXT_WINDOW - 16_384);
    expect(events[still - 1]).toMatchObject({ kind: "compaction_applied" });
    // Four more turns, all above the threshold, and not one compaction started.
    expect(events.slice(still + 1).map((event) => event.kind)).not.toContain("compaction_started");
  });

  it("waits for the background compaction already running when it overflows, and drops that result when its webhook comes", async () => {
    model.slowSummaries = true;
    const events: AgentEvent[] = [];
    async function* prompts() {
      let overflowed = false;
      for (let turn = 0; turn < 20; turn++) {
        if (overflowed) {
          await waitUntil(() => happened(events, "compaction_arrived"), "the background compaction's webhook arrives", 20_000);
          yield prompt(turn);
          return;
        }
        if (happened(events, "compaction_started")) {
          model.agentFaults = [{ kind: "overflow" }];
          overflowed = true;
        }
        yield prompt(turn);
      }
    }
    const overflowJobsBefore = await completedJobs("overflow");
    await loop(prompts(), events);

    const kinds = events.map((event) => event.kind);
    expect(kinds.slice(0, 2)).toEqual(["compaction_started", "blocked"]);
    // The webhook may come before or after the waiting read returns; either way its copy is stale by the next turn.
    expect(kinds.slice(2, 4).sort()).toEqual(["compaction_applied", "compaction_arrived"]);
    expect(kinds.slice(4)).toEqual(["compaction_stale"]);
    // No second job: the agent waited for the one in flight.
    expect(await completedJobs("overflow")).toBe(overflowJobsBefore);
  });
});
