/**
 * Conversations for tests, built instead of pasted, in both provider shapes.
 *
 * A ReAct turn is one user request, then rounds of "assistant calls tools,
 * tools answer", then the assistant's answer: the shape whose tool pairing
 * compaction must never break. `reactTurn` builds one turn from a few numbers;
 * `reactConversationArbitrary` generates whole valid conversations for the
 * property tests, from plans of plain numbers and flags so that thousands of
 * cases stay cheap (texts are slices of one precomputed filler string).
 */
import fc from "fast-check";
import type { ConversationFormat } from "../../src/core/message.js";

export type RawMessage = Record<string, unknown>;

/** Something extra a round carries, to exercise the blocks compaction must pass through. */
export type RoundExtra =
  | "none"
  /** An image inside a tool result (Anthropic) or in a user part (OpenAI: on the request). */
  | "image"
  /** Blocks the core does not interpret: a server tool call and its result, a block type from the future. */
  | "opaque"
  /** Text next to the tool results in the same user message (Anthropic; agents add reminders there). */
  | "mixedText"
  /** A failed call: `is_error` (Anthropic) or arguments that are not valid JSON (OpenAI). */
  | "error";

export interface RoundSpec {
  /** One entry per parallel tool call of the round: the size of its result in characters. */
  readonly resultChars: readonly number[];
  /** The assistant thinks before calling (Anthropic thinking block). */
  readonly thinking: boolean;
  /** The assistant says something before calling. */
  readonly text: boolean;
  readonly extra: RoundExtra;
}

export interface TurnSpec {
  readonly rounds: readonly RoundSpec[];
  readonly requestChars: number;
  readonly requestImage: boolean;
  readonly answerChars: number;
  /**
   * How the turn ends: the assistant's answer; the last round's results (the
   * agent is about to answer); or the last round's calls with no results yet
   * (mid-round: valid input, but its calls are unanswered).
   */
  readonly endsWith: "answer" | "toolResults" | "toolCalls";
  readonly turnId: string | number | undefined;
}

const WORDS = (
  "the of and to in is for that on with as was at by from this be it are or an which file function " +
  "return const value error test result path module import export type string number true false null " +
  "await async data config server request response message token budget summary compaction tool call"
).split(" ");

/** Deterministic word soup with code-like punctuation, so token counts are realistic. */
const FILLER = (() => {
  let seed = 42;
  const parts: string[] = [];
  let length = 0;
  while (length < 200_000) {
    seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
    const word = WORDS[seed % WORDS.length] ?? "x";
    const separator = seed % 23 === 0 ? ";\n" : seed % 7 === 0 ? ", " : seed % 11 === 0 ? "(" : " ";
    parts.push(word, separator);
    length += word.length + separator.length;
  }
  return parts.join("");
})();

/** `chars` characters of filler starting `offset` characters in; longer texts repeat it. */
export function fillerText(chars: number, offset = 0): string {
  if (chars <= 0) return "";
  if (chars > FILLER.length) return FILLER.repeat(Math.ceil(chars / FILLER.length)).slice(0, chars);
  const start = Math.abs(offset) % (FILLER.length - chars + 1);
  return FILLER.slice(start, start + chars);
}

const TINY_PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

let turnsBuilt = 0;

/** Tool call ids must be unique across a conversation; each built turn gets its own prefix. */
function nextTurnKey(): string {
  turnsBuilt += 1;
  return `t${turnsBuilt}`;
}

function withTurnId(message: RawMessage, turnId: string | number | undefined): RawMessage {
  return turnId === undefined ? message : { ...message, turn_id: turnId };
}

interface Call {
  readonly id: string;
  readonly path: string;
  readonly resultChars: number;
}

function roundCalls(key: string, format: ConversationFormat, roundIndex: number, round: RoundSpec): Call[] {
  const prefix = format === "anthropic" ? "toolu" : "call";
  return round.resultChars.map((resultChars, k) => ({
    id: `${prefix}_${key}_${roundIndex}_${k}`,
    path: `src/${key}/file${roundIndex}_${k}.ts`,
    resultChars,
  }));
}

function anthropicRound(key: string, roundIndex: number, round: RoundSpec, withResults: boolean): RawMessage[] {
  const calls = roundCalls(key, "anthropic", roundIndex, round);
  const assistant: unknown[] = [];
  if (round.thinking) assistant.push({ type: "thinking", thinking: fillerText(120, roundIndex * 31), signature: `sig_${key}_${roundIndex}` });
  if (round.text) assistant.push({ type: "text", text: `Reading ${calls.length} file(s) next.` });
  if (round.extra === "opaque") {
    const id = `srvtoolu_${key}_${roundIndex}`;
    assistant.push(
      { type: "server_tool_use", id, name: "web_search", input: { query: "compaction" } },
      { type: "web_search_tool_result", tool_use_id: id, content: [{ type: "web_search_result", url: "https://example.com", title: "Example" }] },
      { type: "future_block", payload: { note: "a block type newer than the parser" } },
    );
  }
  for (const call of calls) assistant.push({ type: "tool_use", id: call.id, name: "read_file", input: { path: call.path } });
  const messages: RawMessage[] = [{ role: "assistant", content: assistant }];
  if (!withResults) return messages;

  const results: unknown[] = calls.map((call, k) => {
    const text = fillerText(call.resultChars, roundIndex * 997 + k * 131);
    const result: RawMessage = { type: "tool_result", tool_use_id: call.id };
    if (round.extra === "image" && k === 0) {
      result.content = [{ type: "text", text }, { type: "image", source: { type: "base64", media_type: "image/png", data: TINY_PNG } }];
    } else {
      result.content = text;
    }
    if (round.extra === "error" && k === 0) result.is_error = true;
    return result;
  });
  if (round.extra === "mixedText") results.push({ type: "text", text: "<reminder>The files above may have changed since.</reminder>" });
  messages.push({ role: "user", content: results });
  return messages;
}

function openAIRound(key: string, roundIndex: number, round: RoundSpec, withResults: boolean): RawMessage[] {
  const calls = roundCalls(key, "openai", roundIndex, round);
  const assistant: RawMessage = {
    role: "assistant",
    content: round.text ? `Reading ${calls.length} file(s) next.` : null,
    tool_calls: calls.map((call, k) => ({
      id: call.id,
      type: "function",
      function: {
        name: "read_file",
        arguments: round.extra === "error" && k === 0 ? `{"path": "${call.path}"` : JSON.stringify({ path: call.path }),
      },
    })),
  };
  if (!withResults) return [assistant];
  return [
    assistant,
    ...calls.map((call, k) => ({ role: "tool", tool_call_id: call.id, content: fillerText(call.resultChars, roundIndex * 997 + k * 131) })),
  ];
}

function request(format: ConversationFormat, turn: TurnSpec, key: string): RawMessage {
  const text = `Request ${key}: ${fillerText(turn.requestChars, turn.requestChars * 7)}`;
  if (format === "anthropic") {
    const content: unknown[] = [{ type: "text", text }];
    if (turn.requestImage) content.push({ type: "image", source: { type: "base64", media_type: "image/png", data: TINY_PNG } });
    return { role: "user", content: turn.requestImage ? content : text };
  }
  const unusual = turn.rounds.some((round) => round.extra === "opaque" || round.extra === "image");
  if (!turn.requestImage && !unusual) return { role: "user", content: text };
  const parts: unknown[] = [{ type: "text", text }];
  if (turn.requestImage) parts.push({ type: "image_url", image_url: { url: `data:image/png;base64,${TINY_PNG}` } });
  if (unusual) parts.push({ type: "future_part", payload: "a part type newer than the parser" });
  return { role: "user", content: parts };
}

/** One turn in the given shape, with `turn_id` on every message when the spec has one. */
export function buildTurn(format: ConversationFormat, turn: TurnSpec, key = nextTurnKey()): RawMessage[] {
  const messages: RawMessage[] = [request(format, turn, key)];
  const buildRound = format === "anthropic" ? anthropicRound : openAIRound;
  turn.rounds.forEach((round, i) => {
    const last = i === turn.rounds.length - 1;
    messages.push(...buildRound(key, i, round, !(last && turn.endsWith === "toolCalls")));
  });
  if (turn.endsWith === "answer" || turn.rounds.length === 0) {
    messages.push({ role: "assistant", content: `Answer ${key}: ${fillerText(turn.answerChars, turn.answerChars * 3)}` });
  }
  return messages.map((message) => withTurnId(message, turn.turnId));
}

export interface ReactTurnOptions {
  /** Default `"anthropic"`. */
  readonly format?: ConversationFormat;
  /** Tool rounds between the request and the answer. Default 3. */
  readonly rounds?: number;
  /** Tool calls per round, all in one assistant message. Default 1. */
  readonly parallelCalls?: number;
  /** Characters in each tool result. Default 400. */
  readonly toolResultChars?: number;
  /** Default 200. */
  readonly requestChars?: number;
  /** Default 300. */
  readonly answerChars?: number;
  /** Default `"answer"`. */
  readonly endsWith?: TurnSpec["endsWith"];
  readonly turnId?: string | number;
  /** Anthropic: a thinking block before each round's calls. Default false. */
  readonly thinking?: boolean;
}

/**
 * One ReAct turn: a user request, `rounds` rounds of tool calls and results,
 * then the assistant's answer. Tool call ids are unique across every turn
 * built in the process, so turns can be concatenated freely.
 */
export function reactTurn(options: ReactTurnOptions = {}): RawMessage[] {
  const round: RoundSpec = {
    resultChars: Array.from({ length: options.parallelCalls ?? 1 }, () => options.toolResultChars ?? 400),
    thinking: options.thinking ?? false,
    text: false,
    extra: "none",
  };
  return buildTurn(options.format ?? "anthropic", {
    rounds: Array.from({ length: options.rounds ?? 3 }, () => round),
    requestChars: options.requestChars ?? 200,
    requestImage: false,
    answerChars: options.answerChars ?? 300,
    endsWith: options.endsWith ?? "answer",
    turnId: options.turnId,
  });
}

/** Turns joined into one message list; a bare list is valid input in both shapes. */
export function conversation(...turns: readonly RawMessage[][]): RawMessage[] {
  return turns.flat();
}

export interface ConversationArbitraryOptions {
  /** Only this shape; default both. */
  readonly format?: ConversationFormat;
  /** Default 4. */
  readonly maxTurns?: number;
  /** Rounds per turn, 0..maxRounds. Default 40. */
  readonly maxRounds?: number;
  /**
   * The largest tool result, in characters. Default 40000: a median case is
   * then ~400k characters; lower it when a property tokenizes whole conversations.
   */
  readonly maxResultChars?: number;
  /**
   * Let the last turn end mid-round with unanswered calls. Default false, so
   * that "no unanswered call in the output" holds for every generated input.
   */
  readonly pendingCalls?: boolean;
}

export interface GeneratedConversation {
  /**
   * The shape it was built in. Pass it to `parseConversation`: a conversation
   * without tool calls, images or system messages is detected as Anthropic.
   */
  readonly format: ConversationFormat;
  /** What `parseConversation` takes: a bare list, or `{messages}` (with `system` for some Anthropic cases). */
  readonly input: unknown;
  /** The same messages as `input` holds, for assertions. */
  readonly messages: readonly RawMessage[];
}

/** Mostly ordinary tool results, many tiny ones, and now and then one big enough to dominate a budget. */
function resultCharsArbitrary(maxResultChars: number): fc.Arbitrary<number> {
  const large = Math.min(15_000, maxResultChars);
  return fc.oneof(
    { weight: 3, arbitrary: fc.integer({ min: 0, max: Math.min(60, maxResultChars) }) },
    { weight: 6, arbitrary: fc.integer({ min: Math.min(200, maxResultChars), max: Math.min(3_000, maxResultChars) }) },
    { weight: 1, arbitrary: fc.integer({ min: large, max: maxResultChars }) },
  );
}

function roundArbitrary(maxResultChars: number): fc.Arbitrary<RoundSpec> {
  return fc.record({
    resultChars: fc.array(resultCharsArbitrary(maxResultChars), { minLength: 1, maxLength: 4 }),
    thinking: fc.boolean(),
    text: fc.boolean(),
    extra: fc.constantFrom<RoundExtra>("none", "none", "none", "none", "image", "opaque", "mixedText", "error"),
  });
}

type TurnIdStyle = "none" | "string" | "number" | "some";

function turnIdFor(style: TurnIdStyle, turnIndex: number): string | number | undefined {
  if (style === "string") return `turn-${turnIndex + 1}`;
  if (style === "number") return turnIndex + 1;
  if (style === "some" && turnIndex % 2 === 0) return `turn-${turnIndex + 1}`;
  return undefined;
}

/**
 * Valid ReAct conversations: several turns of 0..maxRounds rounds, parallel
 * calls, tiny and large tool results, thinking, images, block types the core
 * does not know, text beside tool results, system prompts, turn ids on all,
 * some or none of the turns. Every tool result answers a call in the message
 * before it; every call is answered unless `pendingCalls` lets the last turn
 * stop mid-round.
 */
export function reactConversationArbitrary(options: ConversationArbitraryOptions = {}): fc.Arbitrary<GeneratedConversation> {
  const turnArbitrary = fc.record({
    rounds: fc.array(roundArbitrary(options.maxResultChars ?? 40_000), { maxLength: options.maxRounds ?? 40, size: "max" }),
    requestChars: fc.integer({ min: 1, max: 1_500 }),
    requestImage: fc.boolean(),
    answerChars: fc.integer({ min: 1, max: 2_500 }),
    endsWithResults: fc.boolean(),
  });
  return fc
    .record({
      format: options.format === undefined ? fc.constantFrom<ConversationFormat>("anthropic", "openai") : fc.constant(options.format),
      turns: fc.array(turnArbitrary, { minLength: 1, maxLength: options.maxTurns ?? 4 }),
      turnIds: fc.constantFrom<TurnIdStyle>("none", "string", "number", "some"),
      system: fc.boolean(),
      wrapped: fc.boolean(),
      stopMidRound: options.pendingCalls === true ? fc.boolean() : fc.constant(false),
    })
    .map((plan) => {
      const last = plan.turns.length - 1;
      const turns = plan.turns.map((turn, i): TurnSpec => {
        const ending = i < last ? "answer" : plan.stopMidRound ? "toolCalls" : turn.endsWithResults ? "toolResults" : "answer";
        return { ...turn, endsWith: ending, turnId: turnIdFor(plan.turnIds, i) };
      });
      const messages = turns.flatMap((turn) => buildTurn(plan.format, turn));
      return generated(plan.format, messages, plan.system, plan.wrapped);
    });
}

function generated(format: ConversationFormat, body: RawMessage[], system: boolean, wrapped: boolean): GeneratedConversation {
  const systemText = "You are a coding agent. Work in small verified steps.";
  if (format === "anthropic") {
    if (system) return { format, input: { system: systemText, messages: body }, messages: body };
    return { format, input: wrapped ? { messages: body } : body, messages: body };
  }
  const messages = system ? [{ role: "system", content: systemText }, { role: "developer", content: "Prefer small diffs." }, ...body] : body;
  return { format, input: wrapped ? { messages } : messages, messages };
}
