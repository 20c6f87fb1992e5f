/**
 * The OpenAI Chat Completions shape: `system`/`developer`/`user`/`assistant`
 * messages, assistant `tool_calls`, and one `tool` message per call result.
 *
 * Unlike Anthropic, every tool result is its own message, so the pairing
 * constraint is carried by message kinds alone: a `tool` message is never a
 * cut point.
 */
import { InvalidConversationError } from "../errors.js";
import { tooDeeplyNested } from "./nestingDepth.js";
import type { Block, Message, MessageKind } from "../message.js";
import {
  describeValue,
  readTurnId,
  requireBlockType,
  requireObject,
  requireString,
  requireToolCallId,
  unknownRoleError,
  type RawObject,
} from "./rawFields.js";

const KIND_OF_ROLE: Readonly<Record<string, MessageKind>> = {
  system: "system",
  developer: "system",
  user: "user",
  assistant: "assistant",
  tool: "toolResult",
};

export function parseOpenAIMessage(raw: unknown, index: number): Message {
  const path = `messages[${index}]`;
  const message = requireObject(raw, path, "a message");
  const kind = readKind(message, path);
  const turnId = readTurnId(message, path);
  switch (kind) {
    case "assistant":
      return { index, raw, kind, blocks: assistantBlocks(message, path), turnId };
    case "toolResult":
      return { index, raw, kind, blocks: toolResultBlocks(message, path), turnId };
    default:
      return { index, raw, kind, blocks: parseContent(message.content, `${path}.content`), turnId };
  }
}

function readKind(message: RawObject, path: string): MessageKind {
  const role = message.role;
  const kind = typeof role === "string" && Object.hasOwn(KIND_OF_ROLE, role) ? KIND_OF_ROLE[role] : undefined;
  if (kind !== undefined) return kind;
  if (role === "function") {
    throw new InvalidConversationError(
      `${path}.role`,
      'the legacy "function" role is not supported; send tool results as "tool" messages with a tool_call_id',
    );
  }
  throw unknownRoleError(role, path, "OpenAI", '"system", "developer", "user", "assistant" or "tool"');
}

function parseContent(content: unknown, path: string): Block[] {
  if (typeof content === "string") return [{ type: "text", text: content }];
  if (!Array.isArray(content)) {
    throw new InvalidConversationError(path, `must be a string or an array of content parts, got ${describeValue(content)}`);
  }
  return content.map((part: unknown, i) => parsePart(part, `${path}[${i}]`));
}

function parsePart(item: unknown, path: string): Block {
  const { block: part, type } = requireBlockType(item, path);
  switch (type) {
    case "text":
      return { type: "text", text: requireString(part, "text", path) };
    case "refusal":
      return { type: "text", text: requireString(part, "refusal", path) };
    case "image_url":
      return { type: "media", media: "image" };
    // An audio clip, like a file, is billed by the provider's own rules, not by
    // the size of its base64 payload, so both are priced as attachments.
    case "input_audio":
    case "file":
      return { type: "media", media: "document" };
    default:
      return { type: "opaque", blockType: type, json: JSON.stringify(part) };
  }
}

/** Assistant content may be null when the message only calls tools. */
function assistantBlocks(message: RawObject, path: string): Block[] {
  const blocks = message.content === null || message.content === undefined ? [] : parseContent(message.content, `${path}.content`);
  if (typeof message.refusal === "string") blocks.push({ type: "text", text: message.refusal });
  const calls = message.tool_calls;
  if (calls === undefined || calls === null) return blocks;
  if (!Array.isArray(calls)) {
    throw new InvalidConversationError(`${path}.tool_calls`, `must be an array of tool calls, got ${describeValue(calls)}`);
  }
  calls.forEach((call: unknown, i) => blocks.push(parseToolCall(call, `${path}.tool_calls[${i}]`)));
  return blocks;
}

function parseToolCall(item: unknown, path: string): Block {
  const call = requireObject(item, path, "a tool call");
  const id = requireToolCallId(call, "id", path, "a tool call");
  if (call.type === "custom") {
    const custom = requireObject(call.custom, `${path}.custom`, "a custom tool call's custom field");
    return { type: "toolCall", id, name: requireString(custom, "name", `${path}.custom`), input: custom.input };
  }
  const fn = requireObject(call.function, `${path}.function`, "a tool call's function field");
  return { type: "toolCall", id, name: requireString(fn, "name", `${path}.function`), input: parseArguments(fn.arguments, `${path}.function.arguments`) };
}

/**
 * Arguments arrive as a JSON string. Models sometimes emit invalid JSON; that
 * string is still what was sent, so it is kept as the input rather than rejected.
 * Parsed, they are held to the same nesting bound as the conversation itself.
 */
function parseArguments(args: unknown, path: string): unknown {
  if (typeof args !== "string") return args;
  let parsed: unknown;
  try {
    parsed = JSON.parse(args) as unknown;
  } catch {
    return args;
  }
  // The arguments are one string, so the refusal names them, not a path inside.
  const tooDeep = tooDeeplyNested(parsed, path);
  if (tooDeep !== undefined) throw new InvalidConversationError(path, tooDeep.problem);
  return parsed;
}

/** A tool message's text becomes its result; any non-text parts follow it so they are still priced. */
function toolResultBlocks(message: RawObject, path: string): Block[] {
  const toolCallId = requireToolCallId(message, "tool_call_id", path, "a tool message");
  const parts = parseContent(message.content, `${path}.content`);
  const texts: string[] = [];
  const attachments: Block[] = [];
  for (const part of parts) {
    if (part.type === "text") texts.push(part.text);
    else attachments.push(part);
  }
  return [{ type: "toolResult", toolCallId, text: texts.join("\n"), isError: false }, ...attachments];
}

export function openAIToolResultField(_raw: unknown, index: number): string {
  return `messages[${index}].tool_call_id`;
}
