/**
 * What the user typed in a message, told apart from what the agent's harness
 * wrote in the user's name.
 *
 * Agents put more than the user's words in user messages: Claude Code sends
 * `<task-notification>` and `<local-command-stdout>` elements, marks an
 * interruption with `[Request interrupted by user]`, wraps a slash command in
 * `<command-name>`/`<command-args>` tags and a `!` shell command in
 * `<bash-input>` (its output in `<bash-stdout>`/`<bash-stderr>`) and a `#`
 * memory note in `<user-memory-input>`, sends what the user types while a
 * tool runs beside the tool's result, and opens a session it compacted itself
 * with its own summary. A request pinned from harness text
 * crowds out real ones, and one missed is a user's words lost, so each of
 * these is read as what the user did: typed text kept, a command as it was
 * typed, harness text dropped.
 */
import type { Message } from "./message.js";

/** Claude Code's marker for a turn the user stopped (`… for tool use` when a tool call was refused). */
const INTERRUPTION = /^\[Request interrupted by user(?: for tool use)?\]$/;
/**
 * Openings of text the harness writes whole, prose included: a background
 * task's notification, which Claude Code follows with an instruction to read
 * its output, and Claude Code's own compaction summary, which a model wrote.
 */
const HARNESS_OPENING = /^(?:<task-notification>|This session is being continued from a previous conversation that ran out of context\.)/;
const COMMAND_NAME = /<command-name>([\s\S]*?)<\/command-name>/;
const COMMAND_ARGS = /<command-args>([\s\S]*?)<\/command-args>/;
/**
 * Elements holding what the user typed after a mode key, and that key: a
 * shell command after `!`, a note for the agent's memory after `#`.
 */
const TYPED_AFTER_KEY = [
  { element: /<bash-input>([\s\S]*?)<\/bash-input>/, key: "!" },
  { element: /<user-memory-input>([\s\S]*?)<\/user-memory-input>/, key: "# " },
];
const ELEMENT = /<([\w-]+)(?:\s[^>]*)?>[\s\S]*?<\/\1>/g;
/**
 * The elements Claude Code writes in the user's name. Only a message made of
 * these is the harness's: markup the user pasted (`<div>…</div>`, an SVG) is
 * made of other elements and is what the user asked about.
 */
const HARNESS_ELEMENTS: ReadonlySet<string> = new Set([
  "bash-input",
  "bash-stdout",
  "bash-stderr",
  "command-name",
  "command-message",
  "command-args",
  "command-contents",
  "local-command-caveat",
  "local-command-stdout",
  "local-command-stderr",
  "system-reminder",
  "task-notification",
  "user-memory-input",
  "user-prompt-submit-hook",
]);

/**
 * The text the user typed in `message`, its text blocks joined; empty when
 * there is none. Text beside tool results counts: it is the user speaking
 * while the agent worked. (An OpenAI `tool` message carries no text blocks,
 * only the tool's output.)
 */
export function typedTextOf(message: Message): string {
  if (message.kind !== "user" && message.kind !== "toolResult") return "";
  const typed: string[] = [];
  for (const block of message.blocks) {
    if (block.type !== "text") continue;
    const text = typedPart(block.text.trim());
    if (text !== "") typed.push(text);
  }
  return typed.join("\n");
}

function typedPart(text: string): string {
  if (INTERRUPTION.test(text) || HARNESS_OPENING.test(text)) return "";
  if (!isHarnessMarkup(text)) return text;
  return slashCommandOf(text) ?? typedAfterKeyOf(text) ?? "";
}

/** A slash command from Claude Code's tags, as the user typed it: `/name args`. */
function slashCommandOf(markup: string): string | undefined {
  const name = COMMAND_NAME.exec(markup)?.[1]?.trim();
  if (name === undefined || name === "") return undefined;
  const command = name.startsWith("/") ? name : `/${name}`;
  const args = COMMAND_ARGS.exec(markup)?.[1]?.trim() ?? "";
  return args === "" ? command : `${command} ${args}`;
}

/**
 * A shell command (`!cmd`) or memory note (`# note`) as the user typed it,
 * key included. A command's output is the shell's, not the user's words, and
 * is left out.
 */
function typedAfterKeyOf(markup: string): string | undefined {
  for (const { element, key } of TYPED_AFTER_KEY) {
    const typed = element.exec(markup)?.[1]?.trim();
    if (typed !== undefined && typed !== "") return `${key}${typed}`;
  }
  return undefined;
}

/** Whether `text` is nothing but the harness's elements (see {@link HARNESS_ELEMENTS}). */
function isHarnessMarkup(text: string): boolean {
  if (!text.startsWith("<")) return false;
  for (const [, name] of text.matchAll(ELEMENT)) if (!HARNESS_ELEMENTS.has(name!)) return false;
  return text.replace(ELEMENT, "").trim() === "";
}
