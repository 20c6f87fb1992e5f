/**
 * Turns messages into the plain transcript a summarizer reads.
 *
 * Serializing instead of replaying the messages removes the provider's
 * tool-pairing rules from the summarization call (a replayed head that starts
 * with a tool result would be rejected), and clipping each part keeps one huge
 * tool output from crowding out the rest of the history.
 */
import { clip, clipMiddle, codePointBoundary } from "./clipText.js";
import { declaredNames } from "./declaredNames.js";
import type { Block, Message } from "./message.js";

/**
 * Tool output beyond this many characters is clipped to its head and its tail:
 * a command's verdict ("297 tests, 11 failures"), a subagent's conclusion and
 * the end of a file read are at the bottom, its subject at the top. At about
 * 750 tokens it keeps a typical task description, test run or short file
 * whole; at 2,000 the middle of a 3,400-character task spec (the names it
 * asked for) was cut. Measured in docs/BENCHMARKS.md, "Summary fidelity".
 */
export const TOOL_RESULT_CHARS = 3000;
/** User and assistant text beyond this many characters is clipped. */
export const TEXT_CHARS = 4000;
/** Reasoning is context, not record: clipped harder than text, to its head and tail (its conclusion). */
export const THINKING_CHARS = 1000;
/**
 * Each tool-call argument value is clipped to this many characters: enough
 * for the whole new text of most edits, whose lines (a relation added, a
 * guard changed) are what the agent did. A longer string (a file being
 * written) also keeps the names it declares past the cut.
 */
export const TOOL_ARGUMENT_CHARS = 1000;

const ROLE_LABEL: Record<Message["kind"], string> = {
  system: "System",
  user: "User",
  assistant: "Assistant",
  toolResult: "Tool result",
};

/** One message as transcript text: a labelled line per block. */
export function serializeMessage(message: Message): string {
  const lines: string[] = [];
  for (const block of message.blocks) lines.push(serializeBlock(message, block));
  if (lines.length === 0) lines.push(`[${ROLE_LABEL[message.kind]}]: (empty)`);
  return lines.join("\n");
}

/** Messages as one transcript, oldest first. */
export function serializeMessages(messages: readonly Message[]): string {
  return messages.map(serializeMessage).join("\n");
}

function serializeBlock(message: Message, block: Block): string {
  const role = ROLE_LABEL[message.kind];
  switch (block.type) {
    case "text":
      // Text beside tool results in one user message is the user speaking.
      return `[${message.kind === "toolResult" ? "User" : role}]: ${clip(block.text, TEXT_CHARS)}`;
    case "thinking":
      return `[${role} thinking]: ${clipMiddle(block.text, THINKING_CHARS)}`;
    case "toolCall":
      return `[${role} tool call]: ${block.name}(${serializeArguments(block.input)})`;
    case "toolResult":
      return `[Tool result${block.isError ? " (error)" : ""}]: ${clipMiddle(block.text, TOOL_RESULT_CHARS)}`;
    case "media":
      return block.text === undefined
        ? `[${role} ${block.media}]`
        : `[${role} ${block.media}]: ${clip(block.text, TEXT_CHARS)}`;
    case "opaque":
      return `[${role} ${block.blockType} block]`;
  }
}

/** `name=value` pairs for object arguments; the clipped JSON for anything else. */
function serializeArguments(input: unknown): string {
  if (input !== null && typeof input === "object" && !Array.isArray(input)) {
    return Object.entries(input as Record<string, unknown>)
      .map(([key, value]) => `${key}=${argumentText(value)}`)
      .join(", ");
  }
  return argumentText(input);
}

/**
 * An argument value as JSON, clipped. A long string (a whole file passed to a
 * write tool, a patch) is cut before it is quoted, so it is never escaped in
 * full only to be thrown away, and the names it declares past the cut are
 * listed: they are what the agent's next steps refer to.
 */
function argumentText(value: unknown): string {
  if (typeof value === "string" && value.length > TOOL_ARGUMENT_CHARS) {
    const cut = codePointBoundary(value, TOOL_ARGUMENT_CHARS);
    const names = declaredNames(value.slice(cut));
    const declares = names.length > 0 ? `; declares ${names.join(", ")}` : "";
    return `${JSON.stringify(value.slice(0, cut))} … [${value.length - cut} more characters${declares}]`;
  }
  return clip(JSON.stringify(value) ?? String(value), TOOL_ARGUMENT_CHARS);
}
