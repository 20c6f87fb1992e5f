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
 * Every text is counted by `countTextTokens`, in time linear in its length.
 */
import type { Conversation, Message } from "./message.js";
import { countTextTokens } from "./tokenCounter.js";

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

/** Texts shorter than this (about 8k tokens, a millisecond or two) are counted whole rather than sampled. */
const EXACT_BELOW_CHARS = 32_000;

/** Share of the sampled text tokenized exactly to calibrate the ratio. */
const CALIBRATION_SHARE = 1 / 24;

/** The calibration sample is at most this many characters, whatever the conversation's length. */
const MAX_CALIBRATION_CHARS = 48_000;

/**
 * Characters in one calibration slice. Many short slices estimate the ratio of
 * a mixed conversation far better than a few long ones; each slice starts and
 * ends on white space so no word is split (a split word costs an extra token).
 */
const SLICE_CHARS = 256;

/** The calibration sample has at least this many slices. */
const MIN_SLICES = 64;

/** Successive multiples of it, modulo 1, are the most evenly spread sequence there is. */
const GOLDEN_RATIO_FRACTION = (Math.sqrt(5) - 1) / 2;

/** Raw counts of texts that recur across jobs, shared by every estimator of the process. */
const RECURRING_TEXT_COUNTS = new Map<string, number>();

/** Bounds the recurring-text cache; callers' free-form instructions make each prompt text a new key. */
const MAX_RECURRING_TEXTS = 1_024;

const WHITE = /\s/;

/**
 * Exact counts one estimator made, so a later step of the same job in another
 * process (the API decides, the worker compacts) starts from them instead of
 * tokenizing the same messages again.
 */
export interface KnownTokenCounts {
  /** `[message index, raw token count]` pairs. */
  readonly messages: readonly (readonly [number, number])[];
  /**
   * `[message index, raw token count]` pairs of messages counted only until
   * they passed a ceiling ({@link TokenEstimator.countUpTo}): each has at
   * least that many tokens.
   */
  readonly atLeast?: readonly (readonly [number, number])[];
  /** Raw token count of the top-level system prompt, when it was counted. */
  readonly system?: number;
  /** The calibrated tokens per character, when a sample was taken. */
  readonly tokensPerChar?: number;
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

/**
 * The texts a message is priced by (joined by newlines), their joined length,
 * and the fixed cost of its media. The parts are the message's own strings:
 * keeping them instead of their join keeps a second copy of every
 * conversation out of memory for as long as a job runs.
 */
export interface Priced {
  readonly parts: readonly string[];
  readonly length: number;
  readonly fixed: number;
}

export class TokenEstimator {
  /** Raw (unscaled) exact counts, per message. */
  private exact = new Map<Message, number>();
  /** Raw lower bounds of messages counted only until they passed a ceiling. */
  private atLeast = new Map<Message, number>();
  private priced = new Map<Message, Priced>();
  private readonly systemCounts = new WeakMap<Conversation, number>();
  private exactChars = 0;
  private exactTokens = 0;
  private scale = 1;
  /** Tokens per character of the calibration sample, once taken. */
  private sampleRatio: number | undefined;
  /** The provider's count for the whole input, when the caller knows it. */
  readonly usageTokens: number | undefined;
  /** How many texts were run through the tokenizer; tests use it to prove laziness. */
  tokenizedTexts = 0;

  private readonly knownByIndex: ReadonlyMap<number, number>;
  private readonly knownAtLeastByIndex: ReadonlyMap<number, number>;
  private readonly knownSystem: number | undefined;

  constructor(options: TokenEstimatorOptions = {}) {
    this.usageTokens =
      options.usageTokens !== undefined && options.usageTokens > 0 ? options.usageTokens : undefined;
    this.knownByIndex = new Map(options.known?.messages ?? []);
    this.knownAtLeastByIndex = new Map(options.known?.atLeast ?? []);
    this.knownSystem = options.known?.system;
    this.sampleRatio = options.known?.tokensPerChar;
  }

  /** Every exact count made so far, to hand to the next step of the same job. */
  knownCounts(conversation: Conversation): KnownTokenCounts {
    const messages: [number, number][] = [];
    for (const [message, count] of this.exact) messages.push([message.index, count]);
    const atLeast: [number, number][] = [];
    for (const [message, count] of this.atLeast) atLeast.push([message.index, count]);
    const system = this.systemCounts.get(conversation);
    return {
      messages,
      ...(atLeast.length > 0 && { atLeast }),
      ...(system !== undefined && { system }),
      ...(this.sampleRatio !== undefined && { tokensPerChar: this.sampleRatio }),
    };
  }

  /** The factor every count is multiplied by (1 without a usage hint). */
  get scaleFactor(): number {
    return this.scale;
  }

  /** Exact count of one message (scaled), tokenizing it on first use only. */
  count(message: Message): number {
    return this.rawCount(message) * this.scale;
  }

  /**
   * `count(message)` when that is at most `ceiling`; otherwise a number above
   * `ceiling`, having tokenized only as much of the message as it took to
   * pass it. The cut point asks this of the message that crosses the
   * keep-recent budget, which is often the largest of the tail (a file read,
   * a search result): whether it fits is all the walk needs of it. A count
   * cut short is kept as a lower bound, and handed to the next step of the
   * job with the exact counts, so its walk passes the same message without
   * tokenizing it again; a later `count` tokenizes the whole message.
   */
  countUpTo(message: Message, ceiling: number): number {
    const c = this.pricedOf(message);
    if (this.isKnown(message) || c.length === 0) return this.count(message);
    const rawCeiling = ceiling / this.scale;
    const lowerBound = this.atLeast.get(message) ?? this.knownAtLeastByIndex.get(message.index) ?? 0;
    if (lowerBound > rawCeiling) return lowerBound * this.scale;
    const textCeiling = rawCeiling - MESSAGE_OVERHEAD_TOKENS - c.fixed;
    const textTokens = textCeiling < 0 ? 0 : this.tokenize(c.parts.join("\n"), textCeiling);
    if (textTokens <= textCeiling) return this.recordExact(message, c, textTokens) * this.scale;
    const raw = MESSAGE_OVERHEAD_TOKENS + c.fixed + textTokens;
    this.atLeast.set(message, raw);
    return raw * this.scale;
  }

  /** Whether `message` already has an exact count (no tokenization needed to `count` it). */
  isCounted(message: Message): boolean {
    return this.exact.has(message);
  }

  /**
   * Lets go of every message this estimator counted or priced (the counts'
   * keys, and the priced parts, which are the messages' own strings), keeping
   * what it learned: the calibration, the scale, text counting. A compaction
   * calls it once its prompts are built, so that waiting on its summarizer it
   * holds none of the conversation; counting a message after that tokenizes
   * it again, so take what is needed of the counts first.
   */
  releaseMessages(): void {
    this.exact = new Map();
    this.atLeast = new Map();
    this.priced = new Map();
  }

  /** Whether an exact count exists here or was handed over, so `rawCount` will not tokenize. */
  private isKnown(message: Message): boolean {
    return this.exact.has(message) || this.knownByIndex.has(message.index);
  }

  /** The exact count when known, otherwise the calibrated estimate; never tokenizes. */
  estimate(message: Message): number {
    if (this.isKnown(message)) return this.rawCount(message) * this.scale;
    const c = this.pricedOf(message);
    return (MESSAGE_OVERHEAD_TOKENS + c.fixed + c.length * this.tokensPerChar()) * this.scale;
  }

  /**
   * A count the message cannot exceed, without tokenizing: every o200k token
   * stands for at least one byte of UTF-8, so the byte length bounds the count.
   */
  upperBound(message: Message): number {
    if (this.isKnown(message)) return this.rawCount(message) * this.scale;
    const c = this.pricedOf(message);
    let bytes = Math.max(c.parts.length - 1, 0); // the newlines between parts
    for (const part of c.parts) bytes += Buffer.byteLength(part, "utf8");
    return (MESSAGE_OVERHEAD_TOKENS + c.fixed + bytes) * this.scale;
  }

  /** Exact count of arbitrary text (a transcript line, a summary), scaled. Not cached. */
  countText(text: string): number {
    return this.tokenize(text) * this.scale;
  }

  /**
   * Exact count of text that recurs across jobs (the summarization prompt's
   * fixed wording), scaled; counted once per process.
   */
  countRecurringText(text: string): number {
    let raw = RECURRING_TEXT_COUNTS.get(text);
    if (raw === undefined) {
      raw = this.tokenize(text);
      if (RECURRING_TEXT_COUNTS.size >= MAX_RECURRING_TEXTS) RECURRING_TEXT_COUNTS.clear();
      RECURRING_TEXT_COUNTS.set(text, raw);
    }
    return raw * this.scale;
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
   * Learns the characters-per-token ratio from `messages`, the ones that will
   * be priced by estimate rather than counted. Does nothing when a ratio is
   * already known (a second call, or counts handed over from an earlier step).
   *
   * Short texts are counted whole. Long ones are sampled in slices at evenly
   * spread character positions, so each message weighs by its length and one
   * huge tool output cannot dominate the sample, and the sample stays a small,
   * bounded share of the text however long the conversation grows.
   */
  calibrate(messages: readonly Message[]): void {
    if (this.sampleRatio !== undefined) return;
    let totalChars = 0;
    for (const m of messages) totalChars += this.pricedOf(m).length;
    if (totalChars === 0) return;
    if (totalChars <= EXACT_BELOW_CHARS) {
      let tokens = 0;
      for (const m of messages) tokens += this.rawCount(m) - MESSAGE_OVERHEAD_TOKENS - this.pricedOf(m).fixed;
      this.sampleRatio = tokens / totalChars;
      return;
    }
    const starts: number[] = [];
    let offset = 0;
    for (const m of messages) {
      starts.push(offset);
      offset += this.pricedOf(m).length;
    }
    const targetChars = Math.min(totalChars * CALIBRATION_SHARE, MAX_CALIBRATION_CHARS);
    let sampledChars = 0;
    let sampledTokens = 0;
    // A bounded number of tries: text without white space yields empty slices.
    const maxTries = 4 * Math.max(MIN_SLICES, Math.ceil(targetChars / SLICE_CHARS));
    for (let k = 1; k <= maxTries && (sampledChars < targetChars || k <= MIN_SLICES); k++) {
      const position = ((k * GOLDEN_RATIO_FRACTION) % 1) * totalChars;
      const i = lastAtOrBefore(starts, position);
      const slice = sliceOfPriced(this.pricedOf(messages[i]!), Math.floor(position - starts[i]!), SLICE_CHARS);
      if (slice === "") continue;
      sampledChars += slice.length;
      sampledTokens += this.tokenize(slice);
    }
    if (sampledChars > 0) this.sampleRatio = sampledTokens / sampledChars;
  }

  /**
   * Fixes the scale so the conversation's estimated total equals the
   * provider's reported usage. Calibrate on the whole conversation first.
   */
  applyUsage(conversation: Conversation): void {
    if (this.usageTokens === undefined) return;
    const estimatedTotal = this.systemTokens(conversation) + this.sumEstimates(conversation.messages);
    if (estimatedTotal > 0) this.scale = this.usageTokens / estimatedTotal;
  }

  /** Sum of `estimate` over messages: exact where known, calibrated elsewhere. */
  sumEstimates(messages: readonly Message[]): number {
    let sum = 0;
    for (const m of messages) sum += this.estimate(m);
    return sum;
  }

  /**
   * Tokens per character: the calibration sample's when there is one, else
   * every exact count so far (which, before the head is sampled, is the tail:
   * a fair guess for transcript lines, a biased one for the head).
   */
  private tokensPerChar(): number {
    if (this.sampleRatio !== undefined) return this.sampleRatio;
    return this.exactChars > 0 ? this.exactTokens / this.exactChars : DEFAULT_TOKENS_PER_CHAR;
  }

  private rawCount(message: Message): number {
    const cached = this.exact.get(message);
    if (cached !== undefined) return cached;
    const c = this.pricedOf(message);
    const known = this.knownByIndex.get(message.index);
    const textTokens =
      known !== undefined ? known - MESSAGE_OVERHEAD_TOKENS - c.fixed : c.length === 0 ? 0 : this.tokenize(c.parts.join("\n"));
    return this.recordExact(message, c, textTokens);
  }

  /** Remembers the exact count of `message`, whose text is `textTokens` tokens; returns it raw. */
  private recordExact(message: Message, c: Priced, textTokens: number): number {
    this.exactChars += c.length;
    this.exactTokens += textTokens;
    const n = MESSAGE_OVERHEAD_TOKENS + c.fixed + textTokens;
    this.exact.set(message, n);
    return n;
  }

  private tokenize(text: string, ceiling?: number): number {
    this.tokenizedTexts++;
    return countTextTokens(text, ceiling);
  }

  private pricedOf(message: Message): Priced {
    let c = this.priced.get(message);
    if (c === undefined) {
      c = pricedParts(message);
      this.priced.set(message, c);
    }
    return c;
  }
}

/** A word-aligned slice at `offset` of a message's joined text, within the one part it falls in. */
function sliceOfPriced(c: Priced, offset: number, length: number): string {
  let at = offset;
  for (const part of c.parts) {
    if (at < part.length) return wordAlignedSlice(part, at, length);
    at -= part.length + 1; // the newline after the part
    if (at < 0) return "";
  }
  return "";
}

/**
 * About `length` characters of `text` from `from`, widened or narrowed to
 * begin after and end before white space. Empty when there is none nearby.
 */
function wordAlignedSlice(text: string, from: number, length: number): string {
  let start = from;
  while (start > 0 && start > from - length && !WHITE.test(text[start - 1]!)) start--;
  if (start > 0 && !WHITE.test(text[start - 1]!)) return "";
  let end = Math.min(start + length, text.length);
  while (end < text.length && end > start && !WHITE.test(text[end]!)) end--;
  return text.slice(start, end);
}

/** Index of the last entry of the ascending `starts` that is at most `position`. */
function lastAtOrBefore(starts: readonly number[], position: number): number {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid]! <= position) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/**
 * What a message costs: the text of every block (tool inputs as the JSON the
 * provider sees, unknown blocks as their JSON) and a fixed price per image or
 * document.
 */
export function pricedParts(message: Message): Priced {
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
  let length = parts.length > 0 ? parts.length - 1 : 0;
  for (const part of parts) length += part.length;
  return { parts, length, fixed };
}
