/**
 * The agent loop of examples/agentLoop.ts with the core in-process: no
 * service, no Redis, no webhook. The summary is still written in the
 * background while the agent carries on, so the result still comes back for
 * an older, shorter conversation, and `applyCompaction` still does the
 * splicing; the swap contract is simply computed here (`replacesOf` the
 * messages handed to the compactor) instead of by the service.
 *
 *   ANTHROPIC_API_KEY=… node dist/examples/inProcess.js "first request" "second request" …
 *
 * (In your project, import from "compactd" and "compactd/client".)
 */
import { fileURLToPath } from "node:url";
import Anthropic from "@anthropic-ai/sdk";
import { replacesOf } from "../src/client/index.js";
import { createCompactor, NothingToCompactError, parseConversation, type Reason } from "../src/core/index.js";
import { createAnthropicSummarizer, DEFAULT_MODEL } from "../src/summarizers/anthropic.js";
import { CompactingAgent, type AgentEvent, type CompactionResult, type Compactions } from "./agentLoop.js";
import { exitUnlessSet } from "./exampleEnv.js";

type MessageParam = Anthropic.MessageParam;

export interface InProcessCompactionsOptions {
  readonly anthropic: Anthropic;
  /** The model that writes summaries. */
  readonly model: string;
  readonly contextWindow: number;
  readonly system: string;
}

export function inProcessCompactions(options: InProcessCompactionsOptions): Compactions {
  const summarizer = createAnthropicSummarizer({ client: options.anthropic, model: options.model });
  const compactor = createCompactor({ settings: { contextWindow: options.contextWindow }, summarizer });
  if (compactor === null) throw new TypeError(`contextWindow: must be a positive number of tokens, got ${options.contextWindow}`);

  const compact = async (messages: readonly MessageParam[], reason: Reason, usageTokens?: number): Promise<CompactionResult | null> => {
    // The agent keeps appending to its list; the compactor works on the messages as they are now.
    const sent = [...messages];
    try {
      const result = await compactor.compact(parseConversation({ system: options.system, messages: sent }, "anthropic"), {
        reason,
        ...(usageTokens !== undefined && { usageTokens }),
      });
      return { ...result, replaces: replacesOf(sent) };
    } catch (err) {
      if (err instanceof NothingToCompactError) return null;
      throw err;
    }
  };

  return {
    async start(messages, contextTokens, deliver) {
      // Not awaited: the agent goes on while the summary is written.
      void compact(messages, "threshold", contextTokens).then(deliver, () => deliver(null));
    },
    now: (messages) => compact(messages, "overflow"),
  };
}

export interface InProcessLoopOptions {
  readonly anthropic: Anthropic;
  readonly model: string;
  readonly contextWindow: number;
  readonly onEvent?: (event: AgentEvent) => void;
}

/** An agent talking through `prompts`, compacting in-process; returns the conversation it ends with. */
export async function runInProcessLoop(prompts: AsyncIterable<string> | Iterable<string>, options: InProcessLoopOptions): Promise<MessageParam[]> {
  const system = "You are a careful coding agent.";
  const agent = new CompactingAgent({ ...options, system, compactions: inProcessCompactions({ ...options, system }) });
  for await (const prompt of prompts) await agent.turn(prompt);
  return agent.messages;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  exitUnlessSet("inProcess", { ANTHROPIC_API_KEY: "the agent and its summaries talk to Claude, or to ANTHROPIC_BASE_URL" });
  const messages = await runInProcessLoop(process.argv.slice(2), {
    anthropic: new Anthropic(),
    model: process.env.ANTHROPIC_MODEL ?? DEFAULT_MODEL,
    contextWindow: Number(process.env.CONTEXT_WINDOW ?? 200_000),
    onEvent: (event) => console.error(JSON.stringify(event)),
  });
  console.log(JSON.stringify(messages, null, 2));
}
