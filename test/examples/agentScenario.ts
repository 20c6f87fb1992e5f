/**
 * The scenario the example agents are tested in: long prompts that cross the
 * threshold within a few turns, and a fake Anthropic API whose agent requests
 * get a short reply (or a queued fault) and whose summarization requests get
 * a summary, slowly when a test needs the agent to carry on while the summary
 * is being written.
 */
import type { AgentEvent } from "../../examples/agentLoop.js";
import { fillerText } from "../helpers/conversations.js";
import type { Behaviour, RecordedRequest } from "../helpers/fakeAnthropic.js";
import { waitUntil } from "../helpers/waitUntil.js";

/**
 * A 30000-token window: the threshold is 13616 tokens and keep-recent 3404,
 * and each {@link prompt} is about 2000 tokens (the fake counts a token per
 * four characters), so a loop crosses the threshold after seven turns.
 */
export const CONTEXT_WINDOW = 30_000;

export function prompt(turn: number): string {
  return `Turn ${turn}: review this file.\n${fillerText(8_000, turn * 1_000)}`;
}

export interface ScriptedModel {
  /** Answers to the agent's next requests, before it gets ordinary replies again. */
  agentFaults: Behaviour[];
  /** Summaries take a second or so. */
  slowSummaries: boolean;
  readonly script: (request: RecordedRequest) => Behaviour;
}

export function scriptedModel(): ScriptedModel {
  const model: ScriptedModel = {
    agentFaults: [],
    slowSummaries: false,
    script(request) {
      if (isSummarization(request)) return model.slowSummaries ? { kind: "reply", pings: 20, delayMs: 50 } : { kind: "reply" };
      return model.agentFaults.shift() ?? { kind: "reply", text: "Reviewed; nothing to change." };
    },
  };
  return model;
}

/** The summarizer streams; the example agents do not. */
export function isSummarization(request: RecordedRequest): boolean {
  return request.body.stream === true;
}

export function firstContent(request: RecordedRequest): unknown {
  return (request.body.messages as { content: unknown }[])[0]?.content;
}

export function happened(events: readonly AgentEvent[], kind: AgentEvent["kind"]): boolean {
  return events.some((event) => event.kind === kind);
}

/**
 * The user's side of a compaction scenario: a prompt per turn until a
 * compaction starts; then one more turn while the summary is written, a wait
 * until `arrived` says it has come back, and `turnsAfterStart` turns in all
 * after the one that started it. `startedBefore()` is the turn that was about
 * to be asked when the compaction had started.
 */
export function promptsAroundCompaction(
  events: readonly AgentEvent[],
  turnsAfterStart: number,
  arrived: string,
): { prompts: AsyncGenerator<string>; startedBefore: () => number | undefined } {
  let startedBefore: number | undefined;
  async function* prompts() {
    for (let turn = 0; turn < 20; turn++) {
      startedBefore ??= happened(events, "compaction_started") ? turn : undefined;
      if (startedBefore !== undefined && turn === startedBefore + 1) {
        await waitUntil(() => happened(events, "compaction_arrived"), arrived, 20_000);
      }
      if (startedBefore !== undefined && turn > startedBefore + turnsAfterStart) return;
      yield prompt(turn);
    }
  }
  return { prompts: prompts(), startedBefore: () => startedBefore };
}

/** Six turns, the last of which the model refuses once for its size (an overflow error). */
export async function* promptsRefusedAtTurnFive(model: ScriptedModel): AsyncGenerator<string> {
  for (let turn = 0; turn < 6; turn++) {
    if (turn === 5) model.agentFaults = [{ kind: "overflow" }];
    yield prompt(turn);
  }
}
