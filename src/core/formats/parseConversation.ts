/**
 * From whatever the caller sent to a {@link Conversation}.
 *
 * Parsing is one pass over the messages and never tokenizes or copies content:
 * it runs on every compaction request, including the many that end up with
 * nothing to compact. Each message keeps the caller's object as `raw`, because
 * the kept tail is returned as those very objects.
 */
import { InvalidConversationError } from "../errors.js";
import type { Conversation, ConversationFormat, Message } from "../message.js";
import { checkToolPairing } from "../toolPairing.js";
import { anthropicToolResultField, parseAnthropicMessage } from "./anthropic.js";
import { tooDeeplyNested } from "./nestingDepth.js";
import { openAIToolResultField, parseOpenAIMessage } from "./openai.js";
import { describeValue, isRawObject, requireBlockType } from "./rawFields.js";

export type FormatOption = "auto" | ConversationFormat;

interface FormatParser {
  readonly parseMessage: (raw: unknown, index: number) => Message;
  /** Where the orphan result for `toolCallId` sits in message `index`, for the error. */
  readonly toolResultField: (raw: unknown, index: number, toolCallId: string) => string;
}

const PARSERS: Readonly<Record<ConversationFormat, FormatParser>> = {
  anthropic: { parseMessage: parseAnthropicMessage, toolResultField: anthropicToolResultField },
  openai: { parseMessage: parseOpenAIMessage, toolResultField: openAIToolResultField },
};

export interface ParseOptions {
  /**
   * The caller has already checked that `input` nests no deeper than
   * MAX_NESTING_DEPTH (the API checks the whole request body it came in), so
   * the walk over every value need not run twice.
   */
  readonly nestingChecked?: boolean;
}

export function parseConversation(input: unknown, format: FormatOption = "auto", options: ParseOptions = {}): Conversation {
  if (options.nestingChecked !== true) {
    // A bare message array is measured as the envelope it stands for, so both shapes accept the same messages.
    const tooDeep = tooDeeplyNested(Array.isArray(input) ? { messages: input } : input, "");
    if (tooDeep !== undefined) throw new InvalidConversationError(tooDeep.field, tooDeep.problem);
  }
  const envelope = readEnvelope(input);
  const resolved = resolveFormat(envelope, format);
  const { parseMessage, toolResultField } = PARSERS[resolved];
  const messages: Message[] = [];
  for (let i = 0; i < envelope.messages.length; i++) messages.push(parseMessage(envelope.messages[i], i));

  const orphan = checkToolPairing(messages).orphanResults[0];
  if (orphan !== undefined) {
    throw new InvalidConversationError(
      toolResultField(envelope.messages[orphan.index], orphan.index, orphan.toolCallId),
      `the tool result for call "${orphan.toolCallId}" has no matching tool call earlier in the conversation`,
    );
  }
  return { format: resolved, system: envelope.system, systemText: systemText(envelope.system), messages };
}

/**
 * Which shape `input` is in.
 *
 * A conversation of plain user and assistant string messages is valid in both
 * shapes and is written the same way in both, and the only message compaction
 * adds (the summary) is a user string message; so when nothing decides, the
 * answer is Anthropic and the output is still correct for an OpenAI caller.
 */
export function detectFormat(input: unknown): ConversationFormat {
  return resolveFormat(readEnvelope(input), "auto");
}

interface Envelope {
  readonly messages: readonly unknown[];
  /** The top-level `system` value, undefined when absent. */
  readonly system: unknown;
}

function readEnvelope(input: unknown): Envelope {
  if (Array.isArray(input)) return { messages: input, system: undefined };
  if (!isRawObject(input)) {
    throw new InvalidConversationError(
      "input",
      `a conversation must be an array of messages or an object with a "messages" array, got ${describeValue(input)}`,
    );
  }
  const messages = input.messages;
  if (!Array.isArray(messages)) {
    throw new InvalidConversationError("messages", `must be an array of messages, got ${describeValue(messages)}`);
  }
  return { messages, system: input.system };
}

/** A field that only one of the two shapes can have, and why it decides. */
interface Evidence {
  readonly field: string;
  readonly reason: string;
}

function resolveFormat(envelope: Envelope, requested: FormatOption): ConversationFormat {
  // Adapters pass the format through from users (CLI flags, request bodies).
  if (requested !== "auto" && !Object.hasOwn(PARSERS, requested)) {
    throw new InvalidConversationError("format", `must be "auto", "anthropic" or "openai", got ${JSON.stringify(requested)}`);
  }
  const { anthropic, openai } = findEvidence(envelope);
  if (requested === "anthropic" && openai !== undefined) throw contradiction(openai, "OpenAI", requested);
  if (requested === "openai" && anthropic !== undefined) throw contradiction(anthropic, "Anthropic", requested);
  if (requested !== "auto") return requested;
  if (anthropic !== undefined && openai !== undefined) {
    throw new InvalidConversationError(
      openai.field,
      `${openai.reason} is OpenAI Chat Completions shape, but ${anthropic.field} (${anthropic.reason}) is Anthropic Messages shape; a conversation must use one`,
    );
  }
  return openai !== undefined ? "openai" : "anthropic";
}

function contradiction(evidence: Evidence, shape: string, requested: FormatOption): InvalidConversationError {
  return new InvalidConversationError(
    evidence.field,
    `${evidence.reason} is ${shape} shape, but format "${requested}" was requested`,
  );
}

const OPENAI_ROLES = new Set(["tool", "system", "developer", "function"]);
const ANTHROPIC_BLOCKS = new Set(["tool_use", "tool_result", "thinking", "redacted_thinking", "document"]);

/**
 * The first field of each shape's own, scanning until both are found or the
 * messages end. Malformed messages are skipped here; the parser reports them.
 */
function findEvidence(envelope: Envelope): { anthropic?: Evidence; openai?: Evidence } {
  let anthropic: Evidence | undefined =
    envelope.system === undefined ? undefined : { field: "system", reason: "a top-level system field" };
  let openai: Evidence | undefined;
  const { messages } = envelope;
  for (let i = 0; i < messages.length && (anthropic === undefined || openai === undefined); i++) {
    const message = messages[i];
    if (!isRawObject(message)) continue;
    const path = `messages[${i}]`;
    if (openai === undefined && typeof message.role === "string" && OPENAI_ROLES.has(message.role)) {
      openai = { field: `${path}.role`, reason: `role "${message.role}"` };
    }
    if (openai === undefined && message.tool_calls !== undefined) {
      openai = { field: `${path}.tool_calls`, reason: "tool_calls" };
    }
    const content: unknown = message.content;
    if (!Array.isArray(content)) continue;
    for (let j = 0; j < content.length; j++) {
      const block: unknown = content[j];
      if (!isRawObject(block) || typeof block.type !== "string") continue;
      const field = `${path}.content[${j}].type`;
      if (anthropic === undefined && (ANTHROPIC_BLOCKS.has(block.type) || (block.type === "image" && block.source !== undefined))) {
        anthropic = { field, reason: `a ${block.type} block` };
      }
      if (openai === undefined && block.type === "image_url") openai = { field, reason: "an image_url part" };
    }
  }
  return { anthropic, openai };
}

/** Anthropic's top-level system prompt is a string or an array of text blocks. */
function systemText(system: unknown): string {
  if (system === undefined) return "";
  if (typeof system === "string") return system;
  if (!Array.isArray(system)) {
    throw new InvalidConversationError("system", `must be a string or an array of text blocks, got ${describeValue(system)}`);
  }
  return system
    .map((item: unknown, i) => {
      const { block, type } = requireBlockType(item, `system[${i}]`);
      if (type !== "text" || typeof block.text !== "string") {
        throw new InvalidConversationError(`system[${i}]`, `system blocks must be text blocks with a string text, got type "${type}"`);
      }
      return block.text;
    })
    .join("\n");
}
