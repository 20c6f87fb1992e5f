/**
 * The Anthropic Messages shape: `{role: "user" | "assistant", content}` where
 * content is a string or an array of typed blocks.
 *
 * Only the blocks whose meaning compaction depends on are interpreted: text and
 * thinking (counted and summarized), tool_use and tool_result (the pairing
 * constraint), images and documents (fixed cost). Everything else, including
 * server tool blocks and block types newer than this code, is `opaque`: server
 * tools are called and answered inside one assistant message, so they cannot
 * be orphaned by a cut, and an unknown block is safest passed through as-is.
 */
import { InvalidConversationError } from "../errors.js";
import type { Block, Message, MessageKind } from "../message.js";
import {
  describeValue,
  isRawObject,
  readTurnId,
  requireBlockType,
  requireObject,
  requireString,
  requireToolCallId,
  unknownRoleError,
  type RawObject,
} from "./rawFields.js";

type Role = "user" | "assistant";

export function parseAnthropicMessage(raw: unknown, index: number): Message {
  const path = `messages[${index}]`;
  const message = requireObject(raw, path, "a message");
  const role = readRole(message, path);
  const blocks = parseContent(message.content, role, `${path}.content`);
  return { index, raw, kind: kindOf(role, blocks), blocks, turnId: readTurnId(message, path) };
}

/**
 * A user message that answers a tool call is a tool-result message even when
 * it also carries text (agents append reminders next to results): cutting
 * before it would separate the results from their calls.
 */
function kindOf(role: Role, blocks: readonly Block[]): MessageKind {
  if (role === "assistant") return "assistant";
  return blocks.some((block) => block.type === "toolResult") ? "toolResult" : "user";
}

function readRole(message: RawObject, path: string): Role {
  const role = message.role;
  if (role === "user" || role === "assistant") return role;
  if (role === "system") {
    throw new InvalidConversationError(
      `${path}.role`,
      'Anthropic messages have no "system" role; pass the system prompt in the top-level "system" field',
    );
  }
  throw unknownRoleError(role, path, "Anthropic", '"user" or "assistant"');
}

function parseContent(content: unknown, role: Role, path: string): Block[] {
  if (typeof content === "string") return [{ type: "text", text: content }];
  if (!Array.isArray(content)) {
    throw new InvalidConversationError(path, `must be a string or an array of content blocks, got ${describeValue(content)}`);
  }
  const blocks: Block[] = [];
  content.forEach((item: unknown, i) => parseBlock(item, role, `${path}[${i}]`, blocks));
  return blocks;
}

function parseBlock(item: unknown, role: Role, path: string, out: Block[]): void {
  const { block, type } = requireBlockType(item, path);
  switch (type) {
    case "text":
      out.push({ type: "text", text: requireString(block, "text", path) });
      return;
    case "thinking":
      out.push({ type: "thinking", text: requireString(block, "thinking", path) });
      return;
    case "image":
      out.push({ type: "media", media: "image" });
      return;
    case "document":
      out.push(documentBlock(block));
      return;
    case "tool_use":
      if (role !== "assistant") throw misplaced(path, "tool_use", "assistant");
      out.push({
        type: "toolCall",
        id: requireToolCallId(block, "id", path, "a tool_use block"),
        name: requireString(block, "name", path),
        input: block.input,
      });
      return;
    case "tool_result":
      if (role !== "user") throw misplaced(path, "tool_result", "user");
      parseToolResult(block, path, out);
      return;
    default:
      out.push({ type: "opaque", blockType: type, json: JSON.stringify(block) });
  }
}

function misplaced(path: string, type: string, role: Role): InvalidConversationError {
  return new InvalidConversationError(`${path}.type`, `${type} blocks belong in ${role} messages`);
}

/** A plain-text document carries its text; other sources are priced as attachments. */
function documentBlock(block: RawObject): Block {
  const source = block.source;
  if (isRawObject(source) && source.type === "text" && typeof source.data === "string") {
    return { type: "media", media: "document", text: source.data };
  }
  return { type: "media", media: "document" };
}

/**
 * The result's text becomes one `toolResult` block; images or documents inside
 * the result follow it as their own blocks so they are still priced.
 */
function parseToolResult(block: RawObject, path: string, out: Block[]): void {
  const toolCallId = requireToolCallId(block, "tool_use_id", path, "a tool_result block");
  const isError = block.is_error === true;
  const content = block.content;
  if (content === undefined || typeof content === "string") {
    out.push({ type: "toolResult", toolCallId, text: content ?? "", isError });
    return;
  }
  if (!Array.isArray(content)) {
    throw new InvalidConversationError(
      `${path}.content`,
      `a tool result's content must be a string or an array of blocks, got ${describeValue(content)}`,
    );
  }
  const texts: string[] = [];
  const attachments: Block[] = [];
  content.forEach((item: unknown, i) => {
    const itemPath = `${path}.content[${i}]`;
    const { block: inner, type } = requireBlockType(item, itemPath);
    if (type === "text") texts.push(requireString(inner, "text", itemPath));
    else if (type === "image") attachments.push({ type: "media", media: "image" });
    else if (type === "document") attachments.push(documentBlock(inner));
    else attachments.push({ type: "opaque", blockType: type, json: JSON.stringify(inner) });
  });
  out.push({ type: "toolResult", toolCallId, text: texts.join("\n"), isError }, ...attachments);
}

/**
 * Where a tool result for `toolCallId` sits inside an Anthropic message, for
 * errors that are found after parsing (an orphan is only known once the whole
 * conversation has been read).
 */
export function anthropicToolResultField(raw: unknown, index: number, toolCallId: string): string {
  const content = isRawObject(raw) ? raw.content : undefined;
  const position = Array.isArray(content)
    ? content.findIndex((block: unknown) => isRawObject(block) && block.type === "tool_result" && block.tool_use_id === toolCallId)
    : -1;
  return position < 0 ? `messages[${index}]` : `messages[${index}].content[${position}].tool_use_id`;
}
