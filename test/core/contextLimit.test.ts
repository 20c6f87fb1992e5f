import type Anthropic from "@anthropic-ai/sdk";
import { describe, expect, it } from "vitest";
import { responseHitContextLimit, type NormalizedResponse } from "../../src/core/contextLimit.js";

// Builders for each accepted shape, filled in the way the providers fill them.

interface AnthropicUsage {
  readonly input: number;
  readonly output: number;
  readonly cacheRead?: number;
  readonly cacheWrite?: number;
}

/** A complete Messages API response, as `messages.create()` or `finalMessage()` return it. */
function anthropicMessage(
  stopReason: Anthropic.StopReason | null,
  usage: AnthropicUsage,
  content: Anthropic.ContentBlock[] = [{ type: "text", text: "Done.", citations: null }],
): Anthropic.Message {
  return {
    id: "msg_01XFDUDYJgAACzvnptvVoYEL",
    type: "message",
    role: "assistant",
    model: "claude-sonnet-4-5",
    container: null,
    diagnostics: null,
    content,
    stop_reason: stopReason,
    stop_details: null,
    stop_sequence: null,
    usage: {
      input_tokens: usage.input,
      output_tokens: usage.output,
      cache_read_input_tokens: usage.cacheRead ?? null,
      cache_creation_input_tokens: usage.cacheWrite ?? null,
      cache_creation: null,
      inference_geo: null,
      output_tokens_details: null,
      server_tool_use: null,
      service_tier: "standard",
      speed: null,
    },
  } as Anthropic.Message;
}

/** A Chat Completions response (OpenAI, z.ai, Xiaomi MiMo, DeepSeek, vLLM, OpenRouter...). */
function chatCompletion(
  finishReason: string,
  usage: { prompt_tokens?: number; completion_tokens?: number } | undefined,
  message: Record<string, unknown> = { role: "assistant", content: "Done." },
): object {
  return {
    id: "chatcmpl-9xk2",
    object: "chat.completion",
    created: 1_760_000_000,
    model: "glm-4.6",
    choices: [{ index: 0, message, finish_reason: finishReason, logprobs: null }],
    ...(usage === undefined ? {} : { usage: { ...usage, total_tokens: (usage.prompt_tokens ?? 0) + (usage.completion_tokens ?? 0) } }),
  };
}

/** An Ollama /api/chat response. */
function ollamaChat(doneReason: string, promptEvalCount: number | undefined, evalCount: number | undefined, content = "Done."): object {
  return {
    model: "qwen3:8b",
    created_at: "2025-10-01T12:00:00Z",
    message: { role: "assistant", content },
    done: true,
    done_reason: doneReason,
    total_duration: 4_883_583_458,
    ...(promptEvalCount === undefined ? {} : { prompt_eval_count: promptEvalCount }),
    ...(evalCount === undefined ? {} : { eval_count: evalCount }),
  };
}

const normalized = (stopReason: string | null, inputTokens?: number, outputTokens?: number): NormalizedResponse => ({
  stopReason,
  ...(inputTokens === undefined ? {} : { inputTokens }),
  ...(outputTokens === undefined ? {} : { outputTokens }),
});

const WINDOW = 200_000;
const BUDGET = 8192;

interface Case {
  readonly name: string;
  readonly resp: unknown;
  readonly window?: number;
  readonly budget?: number;
}

const hits: readonly Case[] = [
  // The provider says so itself
  {
    name: "Anthropic stopped on model_context_window_exceeded",
    resp: anthropicMessage("model_context_window_exceeded", { input: 190_000, output: 9_000 }),
  },
  {
    name: "Claude on Bedrock stopped on model_context_window_exceeded, with no window configured",
    resp: anthropicMessage("model_context_window_exceeded", { input: 150_000, output: 50_000 }),
    window: 0,
    budget: 0,
  },
  {
    name: "z.ai's chat endpoint finished with model_context_window_exceeded",
    resp: chatCompletion("model_context_window_exceeded", { prompt_tokens: 120_000, completion_tokens: 8_000 }),
  },
  {
    name: "a normalized response stopped on model_context_window_exceeded",
    resp: normalized("model_context_window_exceeded", 100, 5),
  },
  // z.ai: accepted silently, reported a prompt larger than the window
  {
    name: "z.ai reporting a prompt above the window on a normal stop",
    resp: chatCompletion("stop", { prompt_tokens: 214_512, completion_tokens: 300 }),
  },
  {
    name: "an Anthropic-shaped prompt whose cached part pushes it above the window",
    resp: anthropicMessage("end_turn", { input: 1_000, cacheRead: 199_500, cacheWrite: 600, output: 200 }),
  },
  {
    name: "a normalized response whose prompt is above the window",
    resp: normalized("stop", WINDOW + 1, 20),
  },
  // Xiaomi MiMo and Ollama: truncated to fill the window, nothing generated
  {
    name: "MiMo stopping on length with zero completion tokens and the prompt filling the window",
    resp: chatCompletion("length", { prompt_tokens: 131_000, completion_tokens: 0 }, { role: "assistant", content: "" }),
    window: 131_072,
    budget: 0,
  },
  {
    name: "MiMo with no completion count but an empty message",
    resp: chatCompletion("length", { prompt_tokens: 131_072 }, { role: "assistant", content: null }),
    window: 131_072,
    budget: 0,
  },
  {
    name: "a filled window with no completion count and content given as empty parts",
    resp: chatCompletion("length", { prompt_tokens: 131_072 }, { role: "assistant", content: [{ type: "text", text: "" }] }),
    window: 131_072,
    budget: 0,
  },
  {
    name: "Ollama's /api/generate truncating to num_ctx and generating nothing",
    resp: { model: "llama3.2", response: "", done: true, done_reason: "length", prompt_eval_count: 4_096 },
    window: 4_096,
    budget: 0,
  },
  {
    name: "Ollama truncating to num_ctx and generating nothing",
    resp: ollamaChat("length", 8_192, 0, ""),
    window: 8_192,
    budget: 0,
  },
  {
    name: "Ollama leaving eval_count out when it generated nothing",
    resp: ollamaChat("length", 8_150, undefined, ""),
    window: 8_192,
    budget: 0,
  },
  // Stopped on length below the budget we asked for
  {
    name: "Anthropic stopping on max_tokens after 1,200 of 8,192",
    resp: anthropicMessage("max_tokens", { input: 150_000, output: 1_200 }),
  },
  {
    name: "a chat completion stopping on length after 500 of 8,192",
    resp: chatCompletion("length", { prompt_tokens: 60_000, completion_tokens: 500 }),
  },
  {
    name: "usage Moonshot reports on the choice rather than beside it",
    resp: {
      choices: [{ index: 0, message: { role: "assistant", content: "partial" }, finish_reason: "length", usage: { prompt_tokens: 9_000, completion_tokens: 700 } }],
    },
  },
  {
    name: "Ollama stopping on length after 100 of 512",
    resp: ollamaChat("length", 4_000, 100),
    window: 8_192,
    budget: 512,
  },
  {
    name: "a normalized Gemini MAX_TOKENS stop below the budget",
    resp: normalized("MAX_TOKENS", 30_000, 10),
    budget: 100,
  },
  {
    name: "a Responses API max_output_tokens stop mapped onto the normalized shape",
    resp: normalized("max_output_tokens", 30_000, 10),
    budget: 100,
  },
  {
    name: "a length stop below the budget when no window is configured",
    resp: chatCompletion("length", { prompt_tokens: 60_000, completion_tokens: 500 }),
    window: 0,
  },
  {
    name: "a length stop with nothing generated, far below the window but below the budget",
    resp: chatCompletion("length", { prompt_tokens: 2_000, completion_tokens: 0 }, { role: "assistant", content: "" }),
  },
];

const misses: readonly Case[] = [
  // The budget, not the window, stopped it
  {
    name: "Anthropic stopping on max_tokens having used the whole budget",
    resp: anthropicMessage("max_tokens", { input: 150_000, output: BUDGET }),
  },
  {
    name: "a chat completion stopping on length at exactly the budget",
    resp: chatCompletion("length", { prompt_tokens: 60_000, completion_tokens: BUDGET }),
  },
  {
    name: "a provider that overshot the budget",
    resp: normalized("length", 60_000, BUDGET + 12),
  },
  {
    name: "a reasoning model that spent the whole budget thinking and returned no text",
    resp: chatCompletion("length", { prompt_tokens: 3_000, completion_tokens: BUDGET }, { role: "assistant", content: "", reasoning_content: "Let me think..." }),
  },
  {
    name: "an empty length stop with no usage at all (there is nothing to compare)",
    resp: chatCompletion("length", undefined, { role: "assistant", content: "" }),
  },
  {
    name: "a length stop whose usage is all zeros (the provider does not count)",
    resp: chatCompletion("length", { prompt_tokens: 0, completion_tokens: 0 }),
  },
  {
    name: "an empty length stop at half the window when no budget is known",
    resp: chatCompletion("length", { prompt_tokens: 100_000, completion_tokens: 0 }, { role: "assistant", content: "" }),
    budget: 0,
  },
  {
    name: "a filled window with no completion count where the model still reasoned",
    resp: chatCompletion("length", { prompt_tokens: 131_000 }, { role: "assistant", content: "", reasoning_content: "The user wants..." }),
    window: 131_072,
    budget: 0,
  },
  {
    name: "OpenRouter's reasoning field at a filled window with no completion count",
    resp: chatCompletion("length", { prompt_tokens: 131_000 }, { role: "assistant", content: null, reasoning: "Considering the files..." }),
    window: 131_072,
    budget: 0,
  },
  {
    name: "Ollama's /api/generate at the window with only thinking and no eval_count",
    resp: { model: "qwen3:8b", response: "", thinking: "Okay, so", done: true, done_reason: "length", prompt_eval_count: 4_096 },
    window: 4_096,
    budget: 0,
  },
  {
    name: "Ollama's /api/generate at the window with text but no eval_count",
    resp: { model: "llama3.2", response: "The answer is", done: true, done_reason: "length", prompt_eval_count: 4_096 },
    window: 4_096,
    budget: 0,
  },
  {
    name: "Ollama at the window with no eval_count where the model was thinking",
    resp: { ...ollamaChat("length", 8_192, undefined, ""), message: { role: "assistant", content: "", thinking: "First, ..." } },
    window: 8_192,
    budget: 0,
  },
  {
    name: "a length stop with tool calls but no count, just below the window, with no budget",
    resp: chatCompletion("length", { prompt_tokens: 199_000 }, { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "read", arguments: "{" } }] }),
    budget: 0,
  },
  // Normal stops
  ...(["end_turn", "tool_use", "stop_sequence", "pause_turn", "refusal", null] as const).map((stop) => ({
    name: `Anthropic ${String(stop)} within the window`,
    resp: anthropicMessage(stop, { input: 150_000, cacheRead: 40_000, output: 900 }),
  })),
  { name: "a chat completion stop within the window", resp: chatCompletion("stop", { prompt_tokens: 199_999, completion_tokens: 40 }) },
  { name: "a chat completion tool_calls stop", resp: chatCompletion("tool_calls", { prompt_tokens: 10_000, completion_tokens: 40 }) },
  { name: "Ollama stopping normally", resp: ollamaChat("stop", 3_000, 200), window: 8_192 },
  { name: "a normalized stop at exactly the window", resp: normalized("stop", WINDOW, 10) },
  // The window rules are off without a window
  { name: "z.ai's oversized prompt when the window is 0", resp: chatCompletion("stop", { prompt_tokens: 214_512, completion_tokens: 300 }), window: 0 },
  { name: "z.ai's oversized prompt when the window is negative", resp: chatCompletion("stop", { prompt_tokens: 214_512, completion_tokens: 300 }), window: -1 },
  { name: "z.ai's oversized prompt when the window is NaN", resp: chatCompletion("stop", { prompt_tokens: 214_512, completion_tokens: 300 }), window: Number.NaN },
  {
    name: "MiMo's filled window when the window is 0 and no budget is known",
    resp: chatCompletion("length", { prompt_tokens: 131_000, completion_tokens: 0 }, { role: "assistant", content: "" }),
    window: 0,
    budget: 0,
  },
  // Not a response
  { name: "null", resp: null },
  { name: "undefined", resp: undefined },
  { name: "a number", resp: 42 },
  { name: "a stop reason on its own", resp: "model_context_window_exceeded" },
  { name: "an array", resp: [anthropicMessage("model_context_window_exceeded", { input: 1, output: 1 })] },
  { name: "an object of no known shape", resp: { finish: "length", tokens: 10 } },
  { name: "a chat completion with no choices", resp: { choices: [] } },
];

describe("responseHitContextLimit", () => {
  it.each(hits)("says the window shaped it: $name", ({ resp, window = WINDOW, budget = BUDGET }) => {
    expect(responseHitContextLimit(resp, window, budget)).toBe(true);
  });

  it.each(misses)("says the window did not shape it: $name", ({ resp, window = WINDOW, budget = BUDGET }) => {
    expect(responseHitContextLimit(resp, window, budget)).toBe(false);
  });

  it("needs the budget as requested, since the clamped budget hides the window", () => {
    // We asked for 8,192; only 3,000 fitted in the window, so the request was
    // clamped to 3,000 and the model used all of it.
    const resp = anthropicMessage("max_tokens", { input: 197_000, output: 3_000 });
    expect(responseHitContextLimit(resp, WINDOW, 8_192)).toBe(true);
    expect(responseHitContextLimit(resp, WINDOW, 3_000)).toBe(false);
  });

  it("counts Anthropic's cached prompt tokens as prompt", () => {
    const uncachedOnly = anthropicMessage("end_turn", { input: 150_000, output: 10 });
    const withCache = anthropicMessage("end_turn", { input: 150_000, cacheRead: 30_000, cacheWrite: 20_001, output: 10 });
    expect(responseHitContextLimit(uncachedOnly, WINDOW, BUDGET)).toBe(false);
    expect(responseHitContextLimit(withCache, WINDOW, BUDGET)).toBe(true);
  });

  it("treats 99% of the window as filled and 98% as not", () => {
    const filled = chatCompletion("length", { prompt_tokens: 99_000, completion_tokens: 0 }, { role: "assistant", content: "" });
    const roomLeft = chatCompletion("length", { prompt_tokens: 98_000, completion_tokens: 0 }, { role: "assistant", content: "" });
    expect(responseHitContextLimit(filled, 100_000, 0)).toBe(true);
    expect(responseHitContextLimit(roomLeft, 100_000, 0)).toBe(false);
  });

  it("never throws on a response whose fields cannot be read", () => {
    const hostile = new Proxy(
      {},
      {
        has: () => true,
        get() {
          throw new Error("no reads");
        },
      },
    );
    expect(responseHitContextLimit(hostile, WINDOW, BUDGET)).toBe(false);
  });
});
