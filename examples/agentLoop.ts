/**
 * An agent loop that stays under its model's context window with compactd.
 *
 * - After each reply it compares the provider's token usage with the
 *   threshold (`shouldCompact`). Past it, it asks for a compaction in the
 *   background and carries on talking.
 * - The result comes back later (a signed webhook here). At the start of the
 *   next turn it is spliced in with `applyCompaction`, which keeps everything
 *   said in the meantime and refuses a result that no longer fits.
 * - If a request is refused anyway because it does not fit the window
 *   (`isOverflowError`), or a reply is cut short by the window
 *   (`responseHitContextLimit`), the agent cannot go on: it compacts now
 *   (reason `overflow`, waiting for the result) and retries once. A request
 *   refused for its size in bytes (HTTP 413) is not an overflow and is
 *   thrown: compaction cannot shrink the attachment that made it large.
 * - A result that says `stillAboveThreshold` shrank the context, but not
 *   below the threshold: what it keeps verbatim (here, most often the system
 *   prompt) is too large for the window. Asking again at every turn would
 *   give the same result, one summarization after another, so the agent stops
 *   compacting at the threshold and says so; only an overflow compacts it
 *   then, and a later result below the threshold starts it again. (A real
 *   agent would shrink its system prompt or its largest messages, or move to
 *   a model with a larger window.)
 *
 * The loop only needs "start a compaction" and "compact now" ({@link
 * Compactions}); `serviceCompactions` below provides them with the service,
 * examples/inProcess.ts with the core alone.
 *
 *   COMPACTD_URL=http://127.0.0.1:8080 COMPACTD_API_KEY=dev COMPACTD_WEBHOOK_SECRET=whsec_… \
 *   ANTHROPIC_API_KEY=… node dist/examples/agentLoop.js "first request" "second request" …
 *
 * (The service must be allowed to call back to 127.0.0.1: COMPACTD_CALLBACK_ALLOW=127.0.0.1.
 * In your project, import from "compactd/client".)
 */
import { randomUUID } from "node:crypto";
import { fileURLToPath } from "node:url";
import Anthropic from "@anthropic-ai/sdk";
import {
  applyCompaction,
  CompactdApiError,
  CompactdClient,
  isOverflowError,
  normalizeSettings,
  responseHitContextLimit,
  shouldCompact,
  StaleCompactionError,
  type CompactdClientOptions,
  type CompactionSwap,
  type Result,
  type Settings,
  type WebhookEvent,
} from "../src/client/index.js";
import { DEFAULT_MODEL } from "../src/summarizers/anthropic.js";
import { startWebhookReceiver } from "./webhookReceiver.js";
import { exitUnlessSet } from "./exampleEnv.js";

type MessageParam = Anthropic.MessageParam;

/** What the agent reads of a compaction's result: the swap, and whether it left the context above the threshold. */
export type CompactionResult = CompactionSwap & Pick<Result, "tokensAfter" | "stillAboveThreshold">;

/** Where an agent gets its compactions from. */
export interface Compactions {
  /** Starts compacting `messages` in the background; `deliver` gets the result, or null when there is none. */
  start(messages: readonly MessageParam[], contextTokens: number, deliver: (result: CompactionResult | null) => void): Promise<void>;
  /** Compacts `messages` while the agent waits; null when there is nothing to compact. */
  now(messages: readonly MessageParam[]): Promise<CompactionResult | null>;
}

/** What the agent did about its context, for logs and tests. */
export type AgentEvent =
  | { readonly kind: "compaction_started"; readonly messages: number; readonly contextTokens: number }
  | { readonly kind: "compaction_unavailable"; readonly error: string }
  | { readonly kind: "compaction_arrived"; readonly result: boolean }
  | { readonly kind: "compaction_applied"; readonly before: number; readonly after: number }
  | { readonly kind: "compaction_stale" }
  /** The applied result is still above the threshold: no more compactions at the threshold until one comes back below it. */
  | { readonly kind: "still_above_threshold"; readonly tokensAfter: number }
  | { readonly kind: "blocked"; readonly reason: "overflow" | "cut_short" };

export interface AgentOptions {
  readonly anthropic: Anthropic;
  readonly model: string;
  readonly system: string;
  readonly contextWindow: number;
  readonly compactions: Compactions;
  /** Default 4096. */
  readonly maxTokens?: number;
  readonly onEvent?: (event: AgentEvent) => void;
}

export class CompactingAgent {
  messages: MessageParam[] = [];
  private readonly settings: Settings;
  private readonly maxTokens: number;
  /** Results that arrived since the last turn, spliced in at the start of the next. */
  private readonly arrived: CompactionResult[] = [];
  private compacting = false;
  /** The last result applied said stillAboveThreshold: compacting at the threshold would only give it again. */
  private thresholdOutOfReach = false;

  constructor(private readonly options: AgentOptions) {
    this.settings = normalizeSettings({ contextWindow: options.contextWindow });
    this.maxTokens = options.maxTokens ?? 4096;
  }

  /** One turn: the user's text in, the assistant's text out. */
  async turn(userText: string): Promise<string> {
    this.spliceArrived();
    this.messages.push({ role: "user", content: userText });
    const reply = await this.reply();
    this.messages.push({ role: "assistant", content: reply.content });
    await this.compactPastThreshold(contextTokensOf(reply.usage));
    return reply.content.flatMap((block) => (block.type === "text" ? [block.text] : [])).join("");
  }

  private async compactPastThreshold(contextTokens: number): Promise<void> {
    if (this.compacting || this.thresholdOutOfReach || !shouldCompact(this.settings, contextTokens)) return;
    this.compacting = true;
    this.options.onEvent?.({ kind: "compaction_started", messages: this.messages.length, contextTokens });
    const deliver = (result: CompactionResult | null): void => {
      // Still compacting until the result is in the conversation: the next reply's usage does not show it yet.
      if (result === null) this.compacting = false;
      else this.arrived.push(result);
      this.options.onEvent?.({ kind: "compaction_arrived", result: result !== null });
    };
    await this.options.compactions.start(this.messages, contextTokens, deliver).catch((err: unknown) => {
      // Not fatal: the context still fits, and the next turn over the threshold asks again.
      this.compacting = false;
      this.options.onEvent?.({ kind: "compaction_unavailable", error: String(err) });
    });
  }

  private spliceArrived(): void {
    for (const result of this.arrived.splice(0)) {
      this.compacting = false;
      try {
        this.apply(result);
      } catch (err) {
        // History changed under the compaction (an overflow compaction got there first): drop it.
        if (!(err instanceof StaleCompactionError)) throw err;
        this.options.onEvent?.({ kind: "compaction_stale" });
      }
    }
  }

  /** The model's reply; when the context is too large for one, compact now and try once more. */
  private async reply(): Promise<Anthropic.Message> {
    let blocked: unknown;
    try {
      const response = await this.create();
      if (!responseHitContextLimit(response, this.options.contextWindow, this.maxTokens)) return response;
      blocked = new Error("the reply was cut short by the context window");
      this.options.onEvent?.({ kind: "blocked", reason: "cut_short" });
    } catch (err) {
      if (!isOverflowError(err)) throw err;
      blocked = err;
      this.options.onEvent?.({ kind: "blocked", reason: "overflow" });
    }
    const result = await this.options.compactions.now(this.messages);
    if (result === null) throw blocked;
    this.apply(result);
    return this.create();
  }

  /** Splices `result` in (throwing StaleCompactionError when history changed under it), and takes note of whether it reached below the threshold. */
  private apply(result: CompactionResult): void {
    const before = this.messages.length;
    this.messages = applyCompaction(this.messages, result);
    this.options.onEvent?.({ kind: "compaction_applied", before, after: this.messages.length });
    // Absent from a result stored by a service version from before the field: taken as below.
    this.thresholdOutOfReach = result.stillAboveThreshold === true;
    if (this.thresholdOutOfReach) this.options.onEvent?.({ kind: "still_above_threshold", tokensAfter: result.tokensAfter });
  }

  private create(): Promise<Anthropic.Message> {
    const { anthropic, model, system } = this.options;
    return anthropic.messages.create({ model, max_tokens: this.maxTokens, system, messages: this.messages });
  }
}

/** Everything the prompt took up, cached parts included (`input_tokens` alone counts only the uncached part). */
function contextTokensOf(usage: Anthropic.Usage): number {
  return usage.input_tokens + (usage.cache_read_input_tokens ?? 0) + (usage.cache_creation_input_tokens ?? 0) + usage.output_tokens;
}

export interface ServiceCompactionsOptions {
  readonly client: CompactdClient;
  /** Where the service posts this agent's webhooks. */
  readonly callbackUrl: string;
  readonly conversationId: string;
  readonly contextWindow: number;
  readonly system: string;
  /** How long the agent waits for an overflow compaction, in seconds. Default 120. */
  readonly waitSeconds?: number;
}

/** Compactions from the service; webhooks are handed to {@link ServiceCompactions.onWebhook}. */
export interface ServiceCompactions extends Compactions {
  onWebhook(event: WebhookEvent): void;
}

export function serviceCompactions(options: ServiceCompactionsOptions): ServiceCompactions {
  const { client, conversationId, contextWindow, system } = options;
  const waitSeconds = options.waitSeconds ?? 120;
  // The service runs at most one compaction per conversation, so there is at most one result to wait for.
  let pending: ((result: CompactionResult | null) => void) | undefined;
  const settle = (result: CompactionResult | null): void => {
    const deliver = pending;
    pending = undefined;
    deliver?.(result);
  };
  return {
    async start(messages, contextTokens, deliver) {
      // Set before submitting: the webhook can arrive before the submission's answer.
      pending = deliver;
      try {
        const submitted = await client.compact({
          messages,
          system,
          contextWindow,
          conversationId,
          reason: "threshold",
          usageTokens: contextTokens,
          callbackUrl: options.callbackUrl,
        });
        if (submitted.status === "nothing_to_compact") settle(null);
      } catch (err) {
        pending = undefined;
        throw err;
      }
    },
    async now(messages) {
      let job;
      try {
        job = await client.compact({ messages, system, contextWindow, conversationId, reason: "overflow" }, { wait: waitSeconds });
      } catch (err) {
        // The background compaction is still running: its result is the quickest way out.
        if (!(err instanceof CompactdApiError) || err.code !== "compaction_in_flight" || err.jobId === undefined) throw err;
        job = await client.get(err.jobId, { wait: waitSeconds });
      }
      return "result" in job && job.result !== undefined ? job.result : null;
    },
    onWebhook(event) {
      if (event.type === "batch.completed" || event.conversationId !== conversationId) return;
      settle(event.type === "compaction.completed" ? event.result : null);
    },
  };
}

export interface AgentLoopOptions {
  readonly anthropic: Anthropic;
  readonly model: string;
  readonly contextWindow: number;
  /** The service: `{ baseUrl, apiKey }`. */
  readonly compactd: CompactdClientOptions;
  /** The service's COMPACTD_WEBHOOK_SECRET. */
  readonly webhookSecret: string;
  /** Default: "You are a careful coding agent." */
  readonly system?: string;
  readonly onEvent?: (event: AgentEvent) => void;
}

/**
 * An agent talking through `prompts` (they may arrive slowly: a user types),
 * compacting with the service; returns the conversation it ends with.
 */
export async function runAgentLoop(prompts: AsyncIterable<string> | Iterable<string>, options: AgentLoopOptions): Promise<MessageParam[]> {
  const system = options.system ?? "You are a careful coding agent.";
  const conversationId = randomUUID();
  let compactions: ServiceCompactions | undefined;
  const receiver = await startWebhookReceiver({ secret: options.webhookSecret, onEvent: (event) => compactions?.onWebhook(event) });
  compactions = serviceCompactions({
    client: new CompactdClient(options.compactd),
    callbackUrl: receiver.url,
    conversationId,
    contextWindow: options.contextWindow,
    system,
  });
  const agent = new CompactingAgent({ ...options, system, compactions });
  try {
    for await (const prompt of prompts) await agent.turn(prompt);
    return agent.messages;
  } finally {
    await receiver.close();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  exitUnlessSet("agentLoop", {
    ANTHROPIC_API_KEY: "the agent talks to Claude, or to ANTHROPIC_BASE_URL",
    COMPACTD_WEBHOOK_SECRET: "to verify compactd's callbacks; `compactd dev` prints it",
  });
  const env = process.env;
  const messages = await runAgentLoop(process.argv.slice(2), {
    anthropic: new Anthropic(),
    model: env.ANTHROPIC_MODEL ?? DEFAULT_MODEL,
    contextWindow: Number(env.CONTEXT_WINDOW ?? 200_000),
    compactd: { baseUrl: env.COMPACTD_URL ?? "http://127.0.0.1:8080", apiKey: env.COMPACTD_API_KEY ?? "dev" },
    webhookSecret: env.COMPACTD_WEBHOOK_SECRET ?? "",
    onEvent: (event) => console.error(JSON.stringify(event)),
  });
  console.log(JSON.stringify(messages, null, 2));
}
