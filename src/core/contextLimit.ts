/**
 * Recognising a *successful* response that was shaped by a full context
 * window rather than by the completion budget we asked for.
 *
 * Not every provider refuses an oversized request. Some accept it and answer
 * anyway, cut short or built on a silently truncated prompt, and report
 * success. Such a response is incomplete for a reason compaction can fix; if
 * it is taken at face value the agent acts on half an answer, and if it is
 * retried unchanged it comes back the same. This check is the success-path
 * twin of `isOverflowError`.
 *
 * Accepted response shapes, and the failure each is read for:
 *
 * - Anthropic Messages (`stop_reason`, `usage.input_tokens`/`output_tokens`,
 *   `cache_read_input_tokens`, `cache_creation_input_tokens`, `content`):
 *   the stop reason `model_context_window_exceeded` (Anthropic, Claude on
 *   Bedrock, z.ai's Anthropic-compatible endpoint); a stop on `max_tokens`
 *   below the budget. The prompt size is the three input counts together,
 *   because `input_tokens` alone counts only the uncached part and a cached
 *   prompt would otherwise look small.
 * - OpenAI Chat Completions (`choices[0].finish_reason`, `usage.prompt_tokens`/
 *   `completion_tokens`, `choices[0].message`), as spoken by OpenAI, z.ai,
 *   Xiaomi MiMo, DeepSeek, vLLM, OpenRouter and Ollama's compatible endpoint:
 *   z.ai reporting a prompt larger than the window it accepted; MiMo
 *   truncating the input to fill the window exactly and stopping on `length`
 *   with no output; a stop on `length` below the budget.
 * - Ollama native (`done_reason`, `prompt_eval_count`, `eval_count`, and
 *   `message` from /api/chat or `response` from /api/generate): Ollama cuts a
 *   prompt longer than `num_ctx` down to the window without an error, then
 *   stops on `length` having generated nothing. `prompt_eval_count` leaves out
 *   a cached prefix, so a truncation behind a cache hit goes unseen.
 * - {@link NormalizedResponse}, for every other provider: map its stop reason
 *   and counts onto it.
 *
 * Streaming callers pass the assembled final response (the SDK's
 * `finalMessage()`, or the last chunk's finish reason with its usage).
 */

/**
 * A provider-neutral response, for callers whose provider has none of the
 * shapes above (Bedrock Converse, Gemini, the Responses API: map onto this).
 */
export interface NormalizedResponse {
  /**
   * Why generation stopped, in the provider's words. `"length"`,
   * `"max_tokens"` and `"max_output_tokens"` (any case) mean a token cap or
   * the window stopped it; `"model_context_window_exceeded"` means the window
   * did; anything else is a normal stop.
   */
  readonly stopReason: string | null | undefined;
  /** Every prompt token the provider counted, cached ones included. Omit when unknown. */
  readonly inputTokens?: number | undefined;
  /** Every generated token, reasoning included. Omit when unknown. */
  readonly outputTokens?: number | undefined;
}

/**
 * A prompt at this share of the window leaves no room to generate. Not
 * exactly 1: providers that truncate to fit keep a few tokens for the
 * template and the first generated token.
 */
const WINDOW_FILLED = 0.99;

/**
 * Whether a successful response was shaped by a full context window rather
 * than by the completion budget.
 *
 * `contextWindow` is the model's window in tokens; zero, a negative number or
 * NaN disables the rules that need it. `completionBudget` is the max_tokens we
 * requested *before* any clamping to the room left in the window: passing the
 * clamped value would hide exactly the case this detects (the window left
 * less room than we wanted). An unrecognised response is not a hit. Never
 * throws.
 */
export function responseHitContextLimit(resp: unknown, contextWindow: number, completionBudget: number): boolean {
  let observed: Observation | undefined;
  try {
    observed = observe(resp);
  } catch {
    // Only an exotic object (a throwing getter or Proxy trap) gets here.
    return false;
  }
  if (observed === undefined) return false;
  // The provider says so itself (Anthropic, Bedrock, z.ai).
  if (observed.stop === "window") return true;

  const window = positive(contextWindow);
  const { inputTokens, outputTokens } = observed;
  if (window !== undefined && inputTokens !== undefined) {
    // Accepted silently and answered anyway: the prompt did not fit (z.ai).
    if (inputTokens > window) return true;
    // Truncated to fill the window, leaving no room to generate (Xiaomi MiMo, Ollama).
    const noOutput = outputTokens === 0 || (outputTokens === undefined && observed.emptyOutput);
    if (observed.stop === "length" && noOutput && inputTokens >= window * WINDOW_FILLED) return true;
  }

  // Stopped on length having emitted less than we allowed: our own cap is not
  // what stopped it. Without a reported output count there is nothing to
  // compare; an empty message is not a count, since a reasoning model can
  // spend the whole budget thinking and still return no text.
  const budget = positive(completionBudget);
  return observed.stop === "length" && budget !== undefined && outputTokens !== undefined && outputTokens < budget;
}

type StopKind = "window" | "length" | "normal" | "unknown";

/** What the rules need, whatever shape the response came in. */
interface Observation {
  readonly stop: StopKind;
  readonly inputTokens: number | undefined;
  readonly outputTokens: number | undefined;
  /** The response carries no generated content at all: no text, tool call or reasoning. */
  readonly emptyOutput: boolean;
}

type Fields = Readonly<Record<string, unknown>>;

function observe(resp: unknown): Observation | undefined {
  const r = fields(resp);
  if (r === undefined) return undefined;
  if (Array.isArray(r.choices)) return observeOpenAi(r);
  if ("stop_reason" in r || r.type === "message") return observeAnthropic(r);
  if ("done_reason" in r || "prompt_eval_count" in r || "eval_count" in r) return observeOllama(r);
  if ("stopReason" in r || "inputTokens" in r || "outputTokens" in r) return observeNormalized(r);
  return undefined;
}

function observeAnthropic(r: Fields): Observation {
  const usage = fields(r.usage);
  const uncached = count(usage?.input_tokens);
  const inputTokens =
    uncached === undefined
      ? undefined
      : uncached + (count(usage?.cache_read_input_tokens) ?? 0) + (count(usage?.cache_creation_input_tokens) ?? 0);
  const content = Array.isArray(r.content) ? r.content : [];
  const emptyOutput = content.every((block) => {
    const b = fields(block);
    return b?.type === "text" && isBlank(b.text);
  });
  return withUsage(stopKind(r.stop_reason), inputTokens, count(usage?.output_tokens), emptyOutput);
}

function observeOpenAi(r: Fields): Observation {
  const choice = fields((r.choices as readonly unknown[])[0]);
  // Moonshot puts usage on the choice rather than beside it.
  const usage = fields(r.usage) ?? fields(choice?.usage);
  const message = fields(choice?.message);
  const emptyOutput =
    isBlank(message?.content) &&
    isBlank(message?.reasoning_content) &&
    isBlank(message?.reasoning) &&
    !(Array.isArray(message?.tool_calls) && message.tool_calls.length > 0);
  return withUsage(stopKind(choice?.finish_reason), count(usage?.prompt_tokens), count(usage?.completion_tokens), emptyOutput);
}

function observeOllama(r: Fields): Observation {
  const message = fields(r.message);
  const emptyOutput =
    isBlank(message?.content) &&
    isBlank(message?.thinking) &&
    isBlank(r.response) &&
    isBlank(r.thinking) &&
    !(Array.isArray(message?.tool_calls) && message.tool_calls.length > 0);
  return withUsage(stopKind(r.done_reason), count(r.prompt_eval_count), count(r.eval_count), emptyOutput);
}

function observeNormalized(r: Fields): Observation {
  return withUsage(stopKind(r.stopReason), count(r.inputTokens), count(r.outputTokens), false);
}

/**
 * Providers that do not count tokens often report zeros instead of leaving
 * usage out. A real request always has a prompt, so zero in and zero out means
 * "not reported", not "nothing generated".
 */
function withUsage(
  stop: StopKind,
  inputTokens: number | undefined,
  outputTokens: number | undefined,
  emptyOutput: boolean,
): Observation {
  const unreported = inputTokens === 0 && outputTokens === 0;
  return {
    stop,
    inputTokens: unreported ? undefined : inputTokens,
    outputTokens: unreported ? undefined : outputTokens,
    emptyOutput,
  };
}

function stopKind(reason: unknown): StopKind {
  if (typeof reason !== "string" || reason.trim() === "") return "unknown";
  switch (reason.trim().toLowerCase()) {
    case "model_context_window_exceeded":
      return "window";
    case "length":
    case "max_tokens":
    case "max_output_tokens":
      return "length";
    default:
      return "normal";
  }
}

function fields(value: unknown): Fields | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Fields) : undefined;
}

function count(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : undefined;
}

function positive(value: number): number | undefined {
  return Number.isFinite(value) && value > 0 ? value : undefined;
}

/** No text: absent, null, blank, or an array of content parts without any. */
function isBlank(value: unknown): boolean {
  if (value === undefined || value === null) return true;
  if (typeof value === "string") return value.trim() === "";
  if (Array.isArray(value)) return value.every((part) => isBlank(fields(part)?.text ?? part));
  return false;
}
