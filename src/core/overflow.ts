/**
 * Recognising a context overflow among failed LLM calls.
 *
 * Overflow is worth telling apart precisely because its recovery is specific:
 * compact, then retry once. Read as a generic failure it ends the turn for
 * good (every later request is just as large); read as a transient one it
 * resends the same oversized request until the attempts run out. Read too
 * eagerly it is worse still: a rate limit "recovered" by summarizing throws
 * history away and then hits the same limit on the retry.
 *
 * Errors arrive in every shape: `@anthropic-ai/sdk` `APIError`s (status, the
 * JSON body on `error`, the body again inside `message`), OpenAI-style bodies,
 * stream error events that came with HTTP 200, AWS SDK exceptions, gateway
 * bodies that carry the upstream provider's body as a JSON string, `cause`
 * chains and plain strings. So the check first gathers what the provider said
 * from all of them, then judges the words:
 *
 * 1. Exclusions are checked first and win. They are the look-alikes: limits
 *    that mention tokens or size but are not about the window (per-minute
 *    token budgets, throttling, billing, output caps, one oversized part).
 * 2. Then the overflow wordings, one group per provider. A status alone
 *    (400, 413, 422, 500) never makes an overflow: self-hosted servers answer
 *    one with any of them (TGI 422, vLLM behind Xinference 500).
 *
 * Byte-size limits, decided: a refusal of the request for its size in bytes
 * (HTTP 413, Anthropic's `request_too_large` 32 MB limit, Gemini's "Request
 * payload size exceeds the limit", a gateway's "Request Entity Too Large") is
 * not an overflow. It limits the HTTP body, not the tokens in the window, and
 * what fills a body that large is base64: images, PDFs, audio. Compaction
 * keeps the newest messages verbatim, which is where a freshly attached file
 * sits, so compacting destroys history and the retry is refused again. The
 * caller has to shrink or drop the attachment instead. A 413 is therefore
 * judged by its words like any other status: Anthropic's 413 "Request size
 * exceeds model context window" names the window and is an overflow. The same
 * goes for one oversized *part* (an image over 5 MB, a file, one string over
 * the per-field limit), refused whatever the status.
 *
 * A bare 400 or 413 without a body is not overflow, although some providers
 * have answered an overflow that way (Vertex AI through clients that drop the
 * body): any proxy's rejection looks the same, and compacting on
 * every unexplained status destroys context for nothing. Where the body
 * survives only in a structured field (`response.data` of a gaxios error, the
 * `cause` of a Vertex SDK error) it is read from there. A client that drops
 * the body leaves nothing to read: the `openai` JS SDK keeps only a body's
 * `error` field, so vLLM's older top-level `{"object":"error","message":...}`
 * and Xinference's `{"detail":...}` reach the caller as "400 status code (no
 * body)" and "500 status code (no body)".
 */

/**
 * What the provider said, gathered from wherever it was put: every message
 * text, and every HTTP status found in a status field or at the head of a
 * message ("429 {...}", "Error code: 413").
 */
interface Evidence {
  readonly texts: string[];
  readonly statuses: number[];
}

/**
 * Fields that carry what the provider said, and that are walked. Everything
 * else on an error object (request bodies, headers, SDK configs) is left
 * alone: a request body holds the conversation itself, and a conversation
 * that merely discusses "prompt is too long" must not read as an overflow.
 */
const WALKED_KEYS = [
  "message",
  "error",
  "errors",
  "body",
  "responseBody",
  "data",
  "response",
  "detail",
  "details",
  "metadata",
  "raw",
  "code",
  "type",
  "name",
  "reason",
  "status",
  "apiMessage",
  "errorCode",
  "error_code",
  "errorMessage",
  "originalMessage",
  "$metadata",
  "cause",
] as const;

/** Fields that may hold an HTTP status, as a number or a three-digit string. */
const STATUS_KEYS = [
  "status",
  "statusCode",
  "status_code",
  "httpStatusCode",
  "http_code",
  "originalStatusCode",
  "code",
] as const;

/**
 * Bounds on the walk. An error is not trusted to be small or acyclic: a cause
 * chain can loop, a body can be megabytes, a getter can throw. Ten steps of
 * depth is enough for the deepest real shape seen: an SDK error whose message
 * embeds a gateway body whose metadata embeds the upstream provider's body.
 */
const MAX_DEPTH = 10;
const MAX_NODES = 200;
const MAX_ITEMS = 20;
/** Only the head of a long text is judged; provider wordings come first. */
const MAX_TEXT_CHARS = 8192;
const MAX_TOTAL_CHARS = 65536;

/** A status at the head of a message, or after "status", "code" or "HTTP". */
const STATUS_IN_TEXT =
  /(?:^\s*|\b(?:status(?:[ _]?code)?|error code|code|http(?:\/[\d.]+)?)\s*[:=]?\s*)([45]\d\d)(?![\d,])/gi;

/** Statuses that name another cause, whatever the body goes on to say. */
const EXCLUDED_STATUSES: ReadonlySet<number> = new Set([
  402, // payment required: credits or spend limit
  429, // rate limited: the same request succeeds later, and compaction would throw history away for nothing
]);

/**
 * Look-alikes: limits that talk about tokens, length or size without meaning
 * the context window. Each one is matched against every gathered text, and a
 * single hit anywhere decides the error is not an overflow.
 */
const EXCLUSIONS: readonly ((text: string) => boolean)[] = [
  // Per-minute/day token budgets. OpenAI answers a request larger than the
  // organisation's TPM with 429 "Request too large for gpt-4o ... on tokens
  // per min (TPM)", Groq with 413 "Request too large for model ... on tokens
  // per minute (TPM) ... please reduce your message size", Cerebras with
  // "Tokens per minute limit exceeded - too many tokens processed". Shrinking
  // the prompt is not what they ask for; waiting or a higher tier is.
  matches(/rate[ _-]?limit/i),
  matches(/\btokens? per (?:min(?:ute)?|hour|day)\b/i),
  // Throttling and capacity. Bedrock throttles with "ThrottlingException: Too
  // many tokens, please wait before trying again", which reads as an overflow
  // to anyone matching words alone; "Service unavailable: too many tokens" too.
  matches(/throttl/i),
  matches(/please wait\b/i),
  // 429 in words: its reason phrase, which clients that keep only statusText report instead of the number.
  matches(/too many requests/i),
  matches(/service ?unavailable/i),
  // Billing, credits and quotas: "You exceeded your current quota", Gemini's
  // "Quota exceeded for metric ... input_token_count", OpenRouter's "requires
  // more credits, or fewer max_tokens", Anthropic's "credit balance is too low".
  matches(/quota/i),
  matches(/\bbilling\b|\bcredits?\b|insufficient (?:balance|funds)|payment required|spend(?:ing)? limit/i),
  // Output caps: the completion budget is above what the model can generate
  // at all. Compaction cannot fix a max_tokens the model never accepts.
  isBareOutputCap, // OpenAI "max_tokens is too large: 32000. This model supports at most 16384 completion tokens"
  matches(/\bmax_(?:completion_|output_)?tokens\b\W{0,3}\d[\d,]*\s*>\s*\d/i), // Anthropic "max_tokens: 128000 > 64000, which is the maximum allowed number of output tokens"
  matches(
    // Groq "`max_tokens` must be less than or equal to `8192`", DeepSeek "the valid range of max_tokens is [1, 8192]",
    // Bedrock "The maximum tokens you requested exceeds the model limit", Vertex "a maxOutputTokens value of 100000"
    /\bmax_(?:completion_|output_)?tokens`?\s+must be (?:less than|<=|at most)|valid range of max_(?:completion_)?tokens|maximum tokens you requested exceeds the model limit|\bmax_?output_?tokens value of\b/i,
  ),
  // One oversized part, not the request: an image over 5 MB or too many
  // pixels, a file or document over its limit, a single string over the
  // per-field cap (OpenAI `string_above_max_length`, which LiteLLM reports as
  // a ContextWindowExceededError; DashScope's "String value length ...
  // exceeds the maximum allowed").
  matches(/\b(?:image|file|document|pdf|attachment|audio|video|media)s?\b[^.\n]{0,80}?\b(?:exceeds?|too (?:large|big)|larger than|bigger than)\b/i),
  matches(/string value length|string too long\. expected a string with maximum length|string_above_max_length/i),
];

/**
 * "max_tokens is too large: 50000" is an output cap. vLLM words its combined
 * check the same way but goes on to name the input ("'max_tokens' is too
 * large: 2045. This model's maximum context length is 2048 tokens and your
 * request has 8 input tokens"): that one is the window, like Anthropic's
 * "input length and `max_tokens` exceed context limit", and is left to the
 * overflow patterns.
 */
function isBareOutputCap(text: string): boolean {
  return (
    /\bmax_(?:completion_|output_|new_)?tokens\b['`"]?(?:\s+or\s+['`"]?\w+['`"]?)?\s+is too large\b/i.test(text) &&
    !/\binput tokens\b|\bprompt\b/i.test(text)
  );
}

/**
 * Overflow wordings, collected from real provider responses and grouped by
 * who says them. Several providers share OpenAI's "maximum context length is
 * N tokens" sentence; it is listed once.
 */
const OVERFLOW_PATTERNS: readonly RegExp[] = [
  // Anthropic (also through Bedrock, Vertex and Anthropic-compatible endpoints)
  /prompt is too long/i,
  /input length and [`'"]?max_tokens[`'"]? exceeds? context limit/i,
  /request size exceeds model context window/i, // a 413 that names the window
  // OpenAI and Azure OpenAI, Chat Completions and Responses (including stream error events)
  /context[_ ]length[_ ]exceeded/i,
  /exceeds? (?:the )?context window/i, // also llama-cpp-python "Requested tokens (2285) exceed context window of 2048"
  // OpenAI (legacy wording), DeepSeek, OpenRouter ("This endpoint's maximum context length is ..."), and
  // vLLM's OpenAI-compatible server in every version ("... However, you requested 8192 output tokens and
  // your prompt contains at least 8193 input tokens"), also through Bedrock (Llama, Gemma)
  /maximum context length is \d[\d,]* tokens/i,
  // vLLM's renderer ("You passed 30721 input tokens and requested 2048 output tokens. However, the
  // model's context length is only 32768 tokens"), and LM Studio ("loaded with context length of only")
  /context length (?:is|of) only \d+ tokens/i,
  // vLLM's engine, bare or wrapped by Xinference: "The decoder prompt (length 21535) is longer than the
  // maximum model length of 16384", older "Prompt length of 5016 is longer than the maximum model length
  // of 4096", and the V0 engine's "The prompt (total length 25938) is too long to fit into the model"
  /is longer than the maximum model length/i,
  /is too long to fit into the model/i,
  // Amazon Bedrock, including errors inside HTTP 200 event streams: Claude on Bedrock, Nova, and
  // (generic, further down) Titan and Mistral's "Too many input tokens"
  /input is too long for requested model/i,
  /too many total text bytes/i, // text only, which compaction does shrink; not a body-size limit
  /number of input tokens exceeds (?:the )?maximum length/i,
  // Google Gemini and Vertex AI
  /input token count.{0,40}exceeds the maximum/i,
  /input token count is \d+ but (?:the )?model only supports up to/i,
  // Mistral
  /too large for model with \d[\d,]* maximum context length/i,
  // Groq, Cerebras, DeepSeek, vLLM
  /reduce the length of the messages/i,
  // xAI
  /maximum prompt length is \d+/i,
  // Together
  /is longer than the model'?s context length/i,
  // Hugging Face text-generation-inference, also behind Together and the HF Inference API: the input
  // plus max_new_tokens over max-total-tokens, and the input alone over max-input-tokens
  /`?inputs`? tokens \+ `?max_new_tokens`? must be <=/i,
  /`?inputs`? must have less than \d+ tokens/i,
  // z.ai / Zhipu (code 1261)
  /prompt exceeds max length/i,
  // Kimi / Moonshot
  /exceeded model token limit/i,
  // MiniMax
  /context window exceeds limit/i,
  // Qwen / DashScope, Volcano Engine
  /range of input length should be/i,
  /input length \d+ exceeds the maximum length/i,
  // GitHub Copilot: the message, and the code that stays when the message changes
  /prompt token count of \d+ exceeds the limit of \d+/i,
  /model_max_prompt_tokens_exceeded/i,
  // llama.cpp server: the message (newer builds say "request (5000 tokens) exceeds
  // context size (4096 tokens)"), and its error type
  /\bexceeds (?:the available )?context size\b/i,
  /exceed_context_size_error/i,
  // LM Studio, older wording
  /greater than the context length/i,
  // Ollama (chat, and embeddings)
  /prompt too long; exceeded (?:max )?context length/i,
  /input length exceeds (?:the )?(?:maximum )?context length/i,
  // z.ai's finish reason surfaced as error text, LiteLLM's ContextWindowExceededError
  /context[_ ]?window[_ ]?exceeded/i,
  // Gateways and libraries: OpenRouter/Poolside, LiteLLM's "model's maximum context limit", DS4,
  // gpt-oss on Bedrock "Input length (195071) exceeds model's maximum context length (131072)"
  /exceeds? (?:the )?maximum allowed input length/i,
  /exceeds? (?:the )?(?:model'?s )?maximum context (?:length|limit)/i,
  /configured context size is/i,
  // Generic, safe only because the throttling look-alikes are excluded first
  // (Bedrock Titan and Mistral: "Too many input tokens. Max input tokens: 8192")
  /too many (?:input |prompt )?tokens/i,
  // Generic too, and matched by both peers of this module (pi's and WeKnora's): "token limit exceeded"
  // with no per-minute budget or quota beside it is the window's. One that names the output is an output cap.
  /(?<!\b(?:output|completion) )\btoken limit exceeded/i,
];

/**
 * Whether a failed LLM call failed because the request did not fit in the
 * context window. Accepts anything a `catch` can receive; never throws.
 */
export function isOverflowError(err: unknown): boolean {
  try {
    const evidence = gatherEvidence(err);
    if (evidence.statuses.some((status) => EXCLUDED_STATUSES.has(status))) return false;
    if (evidence.texts.some((text) => EXCLUSIONS.some((excluded) => excluded(text)))) return false;
    return evidence.texts.some((text) => OVERFLOW_PATTERNS.some((pattern) => pattern.test(text)));
  } catch {
    // Only a hostile object (a throwing Proxy trap) gets here; an error we
    // cannot read is not one we can claim to recognise.
    return false;
  }
}

function matches(pattern: RegExp): (text: string) => boolean {
  return (text) => pattern.test(text);
}

function gatherEvidence(root: unknown): Evidence {
  const evidence: Evidence = { texts: [], statuses: [] };
  const seen = new Set<object>();
  let nodesLeft = MAX_NODES;
  let charsLeft = MAX_TOTAL_CHARS;

  const addText = (raw: string, depth: number): void => {
    const text = raw.trim();
    if (text === "" || charsLeft <= 0) return;
    const judged = text.slice(0, Math.min(MAX_TEXT_CHARS, charsLeft));
    charsLeft -= judged.length;
    evidence.texts.push(judged);
    for (const match of judged.matchAll(STATUS_IN_TEXT)) evidence.statuses.push(Number(match[1]));
    // Bodies often travel as JSON inside a message ("400 {\"type\":\"error\",...}")
    // or inside another body's field (OpenRouter's `metadata.raw`).
    const embedded = parseEmbeddedJson(text);
    if (embedded !== undefined) visit(embedded, depth + 1);
  };

  const visit = (value: unknown, depth: number): void => {
    if (nodesLeft <= 0 || depth > MAX_DEPTH) return;
    nodesLeft -= 1;
    if (typeof value === "string") {
      addText(value, depth);
      return;
    }
    if (typeof value !== "object" || value === null || seen.has(value)) return;
    seen.add(value);
    if (Array.isArray(value)) {
      for (const item of value.slice(0, MAX_ITEMS)) visit(item, depth + 1);
      return;
    }
    for (const key of STATUS_KEYS) {
      const status = asStatus(readField(value, key));
      if (status !== undefined) evidence.statuses.push(status);
    }
    for (const key of WALKED_KEYS) visit(readField(value, key), depth + 1);
  };

  visit(root, 0);
  return evidence;
}

/** A field read that survives throwing getters and Proxy traps. */
function readField(value: object, key: string): unknown {
  try {
    return (value as Record<string, unknown>)[key];
  } catch {
    return undefined;
  }
}

function asStatus(value: unknown): number | undefined {
  const status = typeof value === "string" && /^\d{3}$/.test(value.trim()) ? Number(value) : value;
  return typeof status === "number" && Number.isInteger(status) && status >= 400 && status <= 599 ? status : undefined;
}

/**
 * The JSON inside a text, if the text carries one: an object ("400 {...}") or
 * an array (Gemini answers with "[{\"error\": ...}]"). A text that starts with
 * a bracketed tag ("[ERROR] ... {...}") is tried from its first brace too.
 */
function parseEmbeddedJson(text: string): unknown {
  const candidates: [number, number][] = [
    [text.indexOf("{"), text.lastIndexOf("}")],
    [text.indexOf("["), text.lastIndexOf("]")],
  ];
  candidates.sort((a, b) => a[0] - b[0]);
  for (const [start, end] of candidates) {
    if (start < 0 || end <= start || end - start > MAX_TOTAL_CHARS) continue;
    try {
      return JSON.parse(text.slice(start, end + 1)) as unknown;
    } catch {
      // not JSON from here; try the other bracket
    }
  }
  return undefined;
}
