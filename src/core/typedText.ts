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
/**
 * The elements Claude Code writes in the user's name. It puts them in the
 * same text block as what the user typed (a `<system-reminder>` after the
 * user's words), so they are cut out wherever they stand and the rest is the
 * user's. Markup the user pasted (`<div>…</div>`, an SVG) is made of other
 * elements and is what the user asked about.
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
/** Any one of {@link HARNESS_ELEMENTS}, with what it holds. */
const HARNESS_ELEMENT = new RegExp(`<(${[...HARNESS_ELEMENTS].join("|")})(?:\\s[^>]*)?>[\\s\\S]*?<\\/\\1>`, "g");

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

/**
 * What the user typed in one text block: the block less the harness's
 * elements, and the command the user typed when the elements hold one. A
 * block the harness wrote whole, or that holds nothing else, gives nothing.
 */
function typedPart(text: string): string {
  if (isHarnessText(text)) return "";
  const words = text.replace(HARNESS_ELEMENT, "").trim();
  if (isHarnessText(words)) return "";
  const command = slashCommandOf(text) ?? typedAfterKeyOf(text);
  return [command, words].filter((part) => part !== undefined && part !== "").join("\n");
}

/** Whether `text` is an interruption marker or opens as text the harness writes whole. */
function isHarnessText(text: string): boolean {
  return INTERRUPTION.test(text) || HARNESS_OPENING.test(text);
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
