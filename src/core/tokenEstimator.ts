/**
 * Token counts for budget decisions, computed as lazily as the decisions allow.
 *
 * Tokenizing a whole long conversation costs tens of milliseconds per pass, and
 * a compaction only needs exact counts where a decision turns on them: the
 * recent tail (so the keep-recent budget is a true ceiling) and the parts of
 * the summarizer input near its limit. Everything else is priced by a
 * characters-per-token ratio calibrated on a sample of the same conversation.
 * Each message is tokenized at most once per estimator; make one estimator per
 * compaction job and hand it to every step.
 *
 * Counts are o200k_base tokens (gpt-tokenizer). Claude's tokenizer counts
 * differently (OpenAI encodings undercount it by roughly a sixth), so when the
 * caller knows the provider's own count for the whole input (`usageTokens`)
 * every count is scaled to it and budgets are enforced in the provider's tokens.
 */
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import type { Conversation, Message } from "./message.js";

/** Role markers and separators a provider adds around every message. */
export const MESSAGE_OVERHEAD_TOKENS = 4;

/**
 * Fixed price of one image. Anthropic bills an image at about width × height /
 * 750 tokens and downsizes anything larger than ~1.15 megapixels, so 1600 is
 * the cost of a full-size image: an upper bound that keeps budgets safe.
 */
export const IMAGE_TOKENS = 1600;

/**
 * Fixed price of one document (PDF) block beyond any plain text it carries:
 * a page costs 1.5k–3k tokens and the page count is unknown without decoding.
 */
export const DOCUMENT_TOKENS = 3000;

/** The ratio used before any exact count exists: o200k on mixed prose, code and JSON. */
const DEFAULT_TOKENS_PER_CHAR = 0.3;

/** Conversations shorter than this (about 30k tokens, a few milliseconds) are counted exactly. */
const EXACT_BELOW_CHARS = 120_000;

/** Share of the conversation's characters tokenized exactly to calibrate the ratio. */
const CALIBRATION_SHARE = 1 / 24;

/** The calibration sample is never smaller than this many messages (when there are that many). */
const MIN_CALIBRATION_MESSAGES = 12;

/** Successive multiples of it, modulo 1, are the most evenly spread sequence there is. */
const GOLDEN_RATIO_FRACTION = (Math.sqrt(5) - 1) / 2;

/** Special-token strings in user content are ordinary text, never control tokens. */
const PLAIN_TEXT = { disallowedSpecial: new Set<string>() } as const;

/**
 * Exact counts one estimator made, keyed by message index, so a later step of
 * the same job in another process (the API decides, the worker compacts)
 * starts from them instead of tokenizing the same messages again.
 */
export interface KnownTokenCounts {
  /** `[message index, raw token count]` pairs. */
  readonly messages: readonly (readonly [number, number])[];
  /** Raw token count of the top-level system prompt, when it was counted. */
  readonly system?: number;
}

export interface TokenEstimatorOptions {
  /**
   * The provider's reported token count for the whole input (system and all
   * messages). When set, every count is scaled so that the conversation's total
   * equals it.
   */
  readonly usageTokens?: number;
  /**
   * Counts from an earlier estimator over the same conversation. They are
   * trusted as they are: hand them only to an estimator for that conversation.
   */
  readonly known?: KnownTokenCounts;
}

/** The text a message is priced by, and the fixed cost of its media. */
interface Countable {
  readonly text: string;
  readonly fixed: number;
}

export class TokenEstimator {
  /** Raw (unscaled) exact counts, per message. */
  private readonly exact = new Map<Message, number>();
  private readonly countables = new Map<Message, Countable>();
  private readonly systemCounts = new WeakMap<Conversation, number>();
  private exactChars = 0;
  private exactTokens = 0;
  private scale = 1;
  /** Tokens per character of the calibration sample, once taken. */
  private sampleRatio: number | undefined;
  private calibrated = false;
  /** The provider's count for the whole input, when the caller knows it. */
  readonly usageTokens: number | undefined;
  /** How many texts were run through the tokenizer; tests use it to prove laziness. */
  tokenizedTexts = 0;

  private readonly knownByIndex: ReadonlyMap<number, number>;
  private readonly knownSystem: number | undefined;

  constructor(options: TokenEstimatorOptions = {}) {
    this.usageTokens =
      options.usageTokens !== undefined && options.usageTokens > 0 ? options.usageTokens : undefined;
    this.knownByIndex = new Map(options.known?.messages ?? []);
    this.knownSystem = options.known?.system;
  }

  /** Every exact count made so far, to hand to the next step of the same job. */
  knownCounts(conversation: Conversation): KnownTokenCounts {
    const messages: [number, number][] = [];
    for (const [message, count] of this.exact) messages.push([message.index, count]);
    const system = this.systemCounts.get(conversation);
    return system === undefined ? { messages } : { messages, system };
  }

  /** The factor every count is multiplied by (1 without a usage hint). */
  get scaleFactor(): number {
    return this.scale;
  }

  /** Exact count of one message (scaled), tokenizing it on first use only. */
  count(message: Message): number {
    return this.rawCount(message) * this.scale;
  }

  /** Whether `message` already has an exact count (no tokenization needed to `count` it). */
  isCounted(message: Message): boolean {
    return this.exact.has(message);
  }

  /** The exact count when known, otherwise the calibrated estimate; never tokenizes. */
  estimate(message: Message): number {
    const known = this.exact.get(message);
    if (known !== undefined) return known * this.scale;
    const c = this.countable(message);
    return (MESSAGE_OVERHEAD_TOKENS + c.fixed + c.text.length * this.tokensPerChar()) * this.scale;
  }

  /** Exact count of arbitrary text (a transcript line, a summary), scaled. Not cached. */
  countText(text: string): number {
    return this.tokenize(text) * this.scale;
  }

  /** Calibrated estimate of arbitrary text, scaled; never tokenizes. */
  estimateText(text: string): number {
    return text.length * this.tokensPerChar() * this.scale;
  }

  /** Tokens of the top-level system prompt, counted exactly (it is sent on every request). */
  systemTokens(conversation: Conversation): number {
    let raw = this.systemCounts.get(conversation);
    if (raw === undefined) {
      raw = conversation.systemText === "" ? 0 : (this.knownSystem ?? this.tokenize(conversation.systemText));
      this.systemCounts.set(conversation, raw);
    }
    return raw * this.scale;
  }

  /**
   * Calibrates the characters-per-token ratio on an evenly spread sample of the
   * conversation, then, when the provider's usage is known, fixes the scale so
   * the conversation's estimated total equals it. Idempotent: a second call on
   * the same estimator does nothing.
   *
   * The sample is spread over the whole conversation rather than taken from the
   * tail because tails are unrepresentative: a session's last rounds are often
   * all tool output while its head is prose.
   */
  calibrate(conversation: Conversation): void {
    if (this.calibrated) return;
    this.calibrated = true;
    const messages = conversation.messages;
    if (messages.length === 0) return;
    let totalChars = 0;
    for (const m of messages) totalChars += this.countable(m).text.length;
    if (totalChars <= EXACT_BELOW_CHARS) {
      // Short conversations are cheap to count whole, and a sample of a few
      // dozen messages says too little to price them within a few percent.
      for (const m of messages) this.rawCount(m);
    }
    const targetChars = totalChars * CALIBRATION_SHARE;
    // Golden-ratio positions spread the sample evenly without a fixed stride:
    // conversations are periodic (call, result, call, result), and a stride in
    // step with the period would sample only one kind of message.
    let sampledChars = 0;
    let sampledTokens = 0;
    const seen = new Set<number>();
    for (let k = 0; seen.size < messages.length; k++) {
      if (sampledChars >= targetChars && seen.size >= MIN_CALIBRATION_MESSAGES) break;
      const i = Math.floor(((k * GOLDEN_RATIO_FRACTION) % 1) * messages.length);
      if (seen.has(i)) continue;
      seen.add(i);
      const m = messages[i]!;
      const c = this.countable(m);
      sampledTokens += this.rawCount(m) - MESSAGE_OVERHEAD_TOKENS - c.fixed;
      sampledChars += c.text.length;
    }
    if (sampledChars > 0) this.sampleRatio = sampledTokens / sampledChars;
    if (this.usageTokens !== undefined) {
      const estimatedTotal = this.systemTokens(conversation) + this.sumEstimates(messages);
      if (estimatedTotal > 0) this.scale = this.usageTokens / estimatedTotal;
    }
  }

  /** Sum of `estimate` over messages: exact where known, calibrated elsewhere. */
  sumEstimates(messages: readonly Message[]): number {
    let sum = 0;
    for (const m of messages) sum += this.estimate(m);
    return sum;
  }

  /**
   * Tokens per character: the calibration sample's when there is one (it is
   * spread over the whole conversation, unlike the tail, whose exact counts
   * say little about the head they would be used to price), else every exact
   * count so far.
   */
  private tokensPerChar(): number {
    if (this.sampleRatio !== undefined) return this.sampleRatio;
    return this.exactChars > 0 ? this.exactTokens / this.exactChars : DEFAULT_TOKENS_PER_CHAR;
  }

  private rawCount(message: Message): number {
    const cached = this.exact.get(message);
    if (cached !== undefined) return cached;
    const c = this.countable(message);
    const known = this.knownByIndex.get(message.index);
    const textTokens = known !== undefined ? known - MESSAGE_OVERHEAD_TOKENS - c.fixed : c.text === "" ? 0 : this.tokenize(c.text);
    this.exactChars += c.text.length;
    this.exactTokens += textTokens;
    const n = MESSAGE_OVERHEAD_TOKENS + c.fixed + textTokens;
    this.exact.set(message, n);
    return n;
  }

  private tokenize(text: string): number {
    this.tokenizedTexts++;
    return countTokens(text, PLAIN_TEXT);
  }

  private countable(message: Message): Countable {
    let c = this.countables.get(message);
    if (c === undefined) {
      c = countableOf(message);
      this.countables.set(message, c);
    }
    return c;
  }
}

/**
 * What a message costs: the text of every block (tool inputs as the JSON the
 * provider sees, unknown blocks as their JSON) and a fixed price per image or
 * document.
 */
function countableOf(message: Message): Countable {
  const parts: string[] = [];
  let fixed = 0;
  for (const b of message.blocks) {
    switch (b.type) {
      case "text":
      case "thinking":
        parts.push(b.text);
        break;
      case "toolCall":
        parts.push(b.name, typeof b.input === "string" ? b.input : JSON.stringify(b.input) ?? "");
        break;
      case "toolResult":
        parts.push(b.text);
        break;
      case "media":
        fixed += b.media === "image" ? IMAGE_TOKENS : DOCUMENT_TOKENS;
        if (b.text !== undefined) parts.push(b.text);
        break;
      case "opaque":
        parts.push(b.json);
        break;
    }
  }
  return { text: parts.join("\n"), fixed };
}
