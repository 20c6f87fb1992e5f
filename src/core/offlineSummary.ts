/**
 * The offline summary: a structured summary extracted from the messages, with
 * no model.
 *
 * It is what every user without an API key gets and what every compaction
 * gets when the model fails, so it has to be something an agent can act on,
 * not a transcript: where the work stopped, what failed, what was changed and
 * declared, what was run and with what result, what was decided, and the
 * names in play. (The user's requests and the file lists are appended after
 * every summary by the compactor; see pinnedRequests.ts and fileOperations.ts.)
 *
 * Each section has a share of the budget and fills it newest first; what a
 * section leaves unused passes to the next. The output is deterministic: the
 * same messages and budget give the same text. A previous summary is merged
 * section by section rather than nested, so successive compactions keep one
 * summary of bounded size; a previous summary in another format (a model's)
 * becomes the "Earlier summary" section.
 */
import { declaredNames } from "./declaredNames.js";
import { MODIFYING_TOOL, pathsIn } from "./fileOperations.js";
import type { Block, Message } from "./message.js";
import { clipMiddle } from "./serialize.js";
import type { TokenEstimator } from "./tokenEstimator.js";

/**
 * The offline history summary's ceiling, whatever the summary budget. An
 * extractive summary grows with the material while each added line is worth
 * less; past this size it crowds out the verbatim tail, which holds the same
 * facts better. A split turn's head gets a quarter of it. With the pinned
 * requests' ceiling this keeps the whole summary under 5,000 tokens.
 */
export const OFFLINE_SUMMARY_TOKENS = 3_200;

/** One item is one line, clipped to this many characters. */
const ITEM_CHARS = 300;
/** The last reply is the agent's own account of where it is: kept longer. */
const LAST_REPLY_CHARS = 800;
/** An item is clipped to fit rather than dropped when at least this much room is left. */
const MIN_CLIPPED_TOKENS = 40;
/** The part of an edit's written text kept in an item. */
const EDIT_CHARS = 240;
/** The names past an edit's opening, listed after it, are clipped to this many characters. */
const EDIT_NAMES_CHARS = 200;
/** Names in code that are unlikely to be plain words: Module.Names, snake_case, camelCase. */
const CODE_NAME = /\b(?:[A-Z][A-Za-z0-9]+(?:\.[A-Z][A-Za-z0-9]+)+|[a-z][a-z0-9]*(?:_[a-z0-9]+)+[?!]?|[a-z]+[A-Z][A-Za-z0-9]*)\b/g;
/** Argument names that hold the text an edit writes, in order of preference. */
const WRITTEN_ARGUMENTS = ["new_string", "newText", "new_str", "content", "patch", "diff", "text"];
/** A command or a result line in an item. */
const SNIPPET_CHARS = 160;

type SectionName = "stopped" | "earlier" | "errors" | "changed" | "edits" | "commands" | "findings" | "identifiers";

interface SectionSpec {
  readonly name: SectionName;
  readonly heading: string;
  /** Share of the budget, before what earlier sections left unused is added. */
  readonly share: number;
  /** The newest state replaces the previous summary's instead of merging with it. */
  readonly replaces?: true;
}

/** In output order, which is also the order budgets are handed out. */
const SECTIONS: readonly SectionSpec[] = [
  { name: "stopped", heading: "## Where the work stopped", share: 0.12, replaces: true },
  { name: "earlier", heading: "## Earlier summary", share: 0.2 },
  { name: "errors", heading: "## Errors (newest first)", share: 0.1 },
  { name: "changed", heading: "## Files changed (newest first)", share: 0.12 },
  { name: "edits", heading: "## Code written (newest first)", share: 0.14 },
  { name: "commands", heading: "## Commands run (newest first)", share: 0.12 },
  { name: "findings", heading: "## Decisions and findings (newest first)", share: 0.1 },
  { name: "identifiers", heading: "## Identifiers", share: 0.1 },
];

/** Lines of assistant prose that record a decision or a finding. */
const FINDING =
  /\b(decid\w*|chose|choos\w*|instead|because|root cause|turns out|found|the (?:issue|problem|bug|cause|fix) (?:is|was)|will use|switch(?:ed)? to|conclu\w*|works now|fixed|confirmed)\b/i;

/** A result line that reports a failure. */
const FAILURE = /\b(error|errors|failed|failure|failures|exception|traceback|panic|fatal|not found|denied)\b/i;

const IDENTIFIER = /`([^`\n]{2,80})`/g;

interface Item {
  /** Items with the same key are one item; the newest wins. */
  readonly key: string;
  readonly text: string;
  /** The messages this item stands for. */
  readonly messages: readonly Message[];
}

export interface OfflineSummaryInput {
  /** The whole range being summarized, oldest first. */
  readonly messages: readonly Message[];
  /** The previous summary's prose (file and request blocks already split off). */
  readonly previousSummary: string | undefined;
  readonly budgetTokens: number;
}

export interface OfflineSummary {
  readonly text: string;
  /** Messages of the range no item of the summary stands for. */
  readonly unrepresented: readonly Message[];
}

export function buildOfflineSummary(input: OfflineSummaryInput, estimator: TokenEstimator): OfflineSummary {
  const fresh = extractItems(input.messages);
  const previous = parseSections(input.previousSummary ?? "");
  const budget = Math.min(input.budgetTokens, OFFLINE_SUMMARY_TOKENS);

  const parts: string[] = [];
  const represented = new Set<Message>();
  let carry = 0;
  for (const spec of SECTIONS) {
    const items = mergeItems(fresh.get(spec.name) ?? [], previous.get(spec.name) ?? [], spec.replaces === true);
    let room = Math.floor(budget * spec.share) + carry - estimator.countText(spec.heading) - 1;
    const lines: string[] = [];
    for (const item of items) {
      const line = fitLine(`- ${item.text}`, room, estimator);
      if (line === undefined) break;
      room -= line.cost;
      lines.push(line.text);
      for (const m of item.messages) represented.add(m);
      if (line.clipped) break;
    }
    if (lines.length > 0) parts.push(`${spec.heading}\n${lines.join("\n")}`);
    carry = lines.length > 0 ? room : room + estimator.countText(spec.heading) + 1;
  }
  const text = parts.length > 0 ? parts.join("\n\n") : "## Where the work stopped\n- (nothing to report)";
  return { text, unrepresented: input.messages.filter((m) => !represented.has(m)) };
}

/**
 * A line and its cost when it fits `room`. A line that does not fit (a long
 * earlier summary, a long last reply) is clipped to head and tail to fill the
 * room left, rather than dropped, so no section is lost to one large item.
 */
function fitLine(text: string, room: number, estimator: TokenEstimator): { text: string; cost: number; clipped: boolean } | undefined {
  const cost = estimator.countText(text) + 1;
  if (cost <= room) return { text, cost, clipped: false };
  if (room < MIN_CLIPPED_TOKENS) return undefined;
  const clipped = clipMiddle(text, Math.floor((text.length * room * 0.9) / cost));
  const clippedCost = estimator.countText(clipped) + 1;
  return clippedCost <= room ? { text: clipped, cost: clippedCost, clipped: true } : undefined;
}

function mergeItems(fresh: readonly Item[], previous: readonly Item[], replaces: boolean): Item[] {
  const all = replaces && fresh.length > 0 ? fresh : [...fresh, ...previous];
  const seen = new Set<string>();
  return all.filter((item) => {
    if (seen.has(item.key)) return false;
    seen.add(item.key);
    return true;
  });
}

interface Call {
  readonly block: Extract<Block, { type: "toolCall" }>;
  readonly message: Message;
  result?: { readonly block: Extract<Block, { type: "toolResult" }>; readonly message: Message };
}

/** Every section's items from the range, newest first. */
function extractItems(messages: readonly Message[]): Map<SectionName, Item[]> {
  const calls: Call[] = [];
  const byId = new Map<string, Call>();
  for (const message of messages) {
    for (const block of message.blocks) {
      if (block.type === "toolCall") {
        const call: Call = { block, message };
        calls.push(call);
        byId.set(block.id, call);
      } else if (block.type === "toolResult") {
        const call = byId.get(block.toolCallId);
        if (call !== undefined) call.result = { block, message };
      }
    }
  }
  const newestCalls = [...calls].reverse();
  return new Map<SectionName, Item[]>([
    ["stopped", stoppedItems(messages, newestCalls)],
    ["errors", newestCalls.flatMap(errorItem)],
    ["changed", changedItems(newestCalls)],
    ["edits", newestCalls.flatMap(editItem)],
    ["commands", newestCalls.flatMap(commandItem)],
    ["findings", findingItems(messages)],
    ["identifiers", identifierItems(messages)],
  ]);
}

function stoppedItems(messages: readonly Message[], newestCalls: readonly Call[]): Item[] {
  const items: Item[] = [];
  const lastReply = [...messages].reverse().find((m) => m.kind === "assistant" && textOf(m) !== "");
  if (lastReply !== undefined) {
    items.push({ key: "reply", text: `Last reply: ${oneLine(clipMiddle(textOf(lastReply), LAST_REPLY_CHARS))}`, messages: [lastReply] });
  }
  const todos = newestCalls.find((c) => Array.isArray((c.block.input as { todos?: unknown } | null)?.todos));
  if (todos !== undefined) {
    const list = (todos.block.input as { todos: unknown[] }).todos.map(todoText).filter((t) => t !== "");
    if (list.length > 0) items.push({ key: "todos", text: `Todo list: ${list.join("; ")}`, messages: withResult(todos) });
  }
  const last = newestCalls[0];
  if (last !== undefined) items.push({ key: "last-call", text: `Last tool call: ${callText(last)}`, messages: withResult(last) });
  return items;
}

function todoText(todo: unknown): string {
  if (todo === null || typeof todo !== "object") return typeof todo === "string" ? todo : "";
  const t = todo as { content?: unknown; status?: unknown };
  const content = typeof t.content === "string" ? t.content : "";
  return typeof t.status === "string" ? `[${t.status}] ${content}` : content;
}

function errorItem(call: Call): Item[] {
  const result = call.result;
  if (result === undefined) return [];
  const failure = result.block.text.split("\n").find(reportsFailure);
  if (!result.block.isError && (commandOf(call) === undefined || failure === undefined)) return [];
  const line = failure ?? firstLine(result.block.text);
  return [{ key: `error:${callSubject(call)}:${line}`, text: `${callSubject(call)} → ${oneLine(clipMiddle(line, SNIPPET_CHARS))}`, messages: withResult(call) }];
}

/** One item per modified path: the tools that changed it and the names written into it. */
function changedItems(newestCalls: readonly Call[]): Item[] {
  const byPath = new Map<string, { tools: string[]; names: string[]; messages: Message[] }>();
  for (const call of newestCalls) {
    if (!MODIFYING_TOOL.test(call.block.name)) continue;
    for (const path of pathsIn(call.block.input)) {
      const entry = byPath.get(path) ?? { tools: [], names: [], messages: [] };
      entry.tools.push(call.block.name);
      for (const value of stringValues(call.block.input)) entry.names.push(...declaredNames(value));
      entry.messages.push(...withResult(call));
      byPath.set(path, entry);
    }
  }
  return [...byPath].map(([path, entry]) => {
    const names = [...new Set(entry.names)];
    const tools = [...new Set(entry.tools)].map((tool) => {
      const n = entry.tools.filter((t) => t === tool).length;
      return n > 1 ? `${tool} ×${n}` : tool;
    });
    const declares = names.length > 0 ? `; declares ${names.join(", ")}` : "";
    return { key: changedKeyOf(path), text: clipMiddle(`${path} (${tools.join(", ")})${declares}`, ITEM_CHARS), messages: entry.messages };
  });
}

/**
 * The opening of what an edit wrote: the code itself names the fields,
 * relations and calls the next steps build on, which a declaration list misses.
 */
function editItem(call: Call): Item[] {
  if (!MODIFYING_TOOL.test(call.block.name)) return [];
  const input = call.block.input as Record<string, unknown> | null;
  const written = WRITTEN_ARGUMENTS.map((key) => input?.[key]).find((v): v is string => typeof v === "string" && v.trim() !== "");
  if (written === undefined) return [];
  const path = pathsIn(input)[0] ?? call.block.name;
  const opening = oneLine(clipMiddle(written.trim(), EDIT_CHARS));
  const names = [...new Set(written.slice(EDIT_CHARS).match(CODE_NAME) ?? [])].filter((name) => !opening.includes(name));
  const uses = names.length > 0 ? `; also names ${clipMiddle(names.join(", "), EDIT_NAMES_CHARS)}` : "";
  return [{ key: `edit:${path}:${written.slice(0, 80)}`, text: `${path}: ${opening}${uses}`, messages: withResult(call) }];
}

function commandItem(call: Call): Item[] {
  const command = commandOf(call);
  if (command === undefined) return [];
  const outcome = call.result === undefined ? "(no result)" : lastLine(call.result.block.text);
  return [{ key: `command:${command}`, text: `\`${oneLine(clipMiddle(command, SNIPPET_CHARS))}\` → ${oneLine(clipMiddle(outcome, SNIPPET_CHARS))}`, messages: withResult(call) }];
}

function findingItems(messages: readonly Message[]): Item[] {
  const items: Item[] = [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]!;
    if (message.kind !== "assistant") continue;
    const lines = textOf(message)
      .split(/\n+|(?<=[.!?])\s+(?=[A-Z`])/)
      .map((l) => l.trim().replace(/^[-*#>\s]+/, ""))
      .filter((l) => l.length > 12 && FINDING.test(l));
    for (const line of lines.reverse()) items.push({ key: `finding:${line}`, text: oneLine(clipMiddle(line, ITEM_CHARS)), messages: [message] });
  }
  return items;
}

/** Backticked names, most mentioned first (newest first among equals). */
function identifierItems(messages: readonly Message[]): Item[] {
  const seen = new Map<string, { count: number; last: number; message: Message }>();
  messages.forEach((message, position) => {
    if (message.kind !== "assistant" && message.kind !== "user") return;
    for (const match of textOf(message).matchAll(IDENTIFIER)) {
      const name = match[1]!.trim();
      const entry = seen.get(name);
      seen.set(name, { count: (entry?.count ?? 0) + 1, last: position, message });
    }
  });
  return [...seen]
    .sort(([, a], [, b]) => b.count - a.count || b.last - a.last)
    .map(([name, entry]) => ({ key: `identifier:${name}`, text: `\`${name}\``, messages: [entry.message] }));
}

/**
 * The previous summary's items by section. An offline summary's sections merge
 * with this one's; any other text (a model's summary, a heading this format
 * does not have) becomes "earlier" items, one per chunk under a heading, so a
 * summary is carried over rather than nested inside the next one.
 */
function parseSections(prose: string): Map<SectionName, Item[]> {
  const sections = new Map<SectionName, Item[]>();
  const text = prose.trim();
  if (text === "") return sections;
  const byHeading = new Map(SECTIONS.map((s) => [s.heading, s.name]));
  const add = (name: SectionName, items: Item[]): void => {
    sections.set(name, [...(sections.get(name) ?? []), ...items]);
  };
  for (const chunk of text.split(/\n+(?=## )/)) {
    const [heading, ...lines] = chunk.split("\n");
    const name = byHeading.get(heading!);
    if (name === undefined) {
      const body = oneLine(chunk.trim());
      if (lines.some((l) => l.trim() !== "")) add("earlier", [{ key: `earlier:${body}`, text: body, messages: [] }]);
      continue;
    }
    const items = lines.filter((l) => l.startsWith("- ")).map((l) => l.slice(2));
    add(name, items.map((t) => ({ key: name === "changed" ? changedKey(t) : `${name}:${t}`, text: t, messages: [] })));
  }
  return sections;
}

/** "0 failures" and "0 errors" are verdicts of success. */
function reportsFailure(line: string): boolean {
  return FAILURE.test(line.replace(/\b0 (?:failures?|errors?)\b/gi, ""));
}

function changedKeyOf(path: string): string {
  return `changed:${path}`;
}

/** The path of a "Files changed" line read back from a previous summary, as its key. */
function changedKey(line: string): string {
  return changedKeyOf(line.replace(/ \([^)]*\)(?:; declares .*)?$/, ""));
}

function commandOf(call: Call): string | undefined {
  const input = call.block.input as { command?: unknown; cmd?: unknown } | null;
  const command = input?.command ?? input?.cmd;
  if (typeof command === "string" && command.trim() !== "") return command.trim();
  if (Array.isArray(command) && command.every((c) => typeof c === "string")) return command.join(" ");
  return undefined;
}

/** What a call acted on, for an error line: its command, else its name and path. */
function callSubject(call: Call): string {
  const command = commandOf(call);
  if (command !== undefined) return `\`${oneLine(clipMiddle(command, SNIPPET_CHARS))}\``;
  const path = pathsIn(call.block.input)[0];
  return path === undefined ? call.block.name : `${call.block.name} ${path}`;
}

function callText(call: Call): string {
  const outcome = call.result === undefined ? "(no result yet)" : lastLine(call.result.block.text);
  return `${callSubject(call)} → ${oneLine(clipMiddle(outcome, SNIPPET_CHARS))}`;
}

function withResult(call: Call): Message[] {
  return call.result === undefined ? [call.message] : [call.message, call.result.message];
}

function stringValues(input: unknown): string[] {
  if (typeof input === "string") return [input];
  if (input === null || typeof input !== "object") return [];
  return Object.values(input as Record<string, unknown>).flatMap(stringValues);
}

function textOf(message: Message): string {
  return message.blocks
    .flatMap((b) => (b.type === "text" ? [b.text] : []))
    .join("\n")
    .trim();
}

function firstLine(text: string): string {
  return text.split("\n").find((l) => l.trim() !== "")?.trim() ?? "";
}

function lastLine(text: string): string {
  const lines = text.split("\n").filter((l) => l.trim() !== "");
  return lines.at(-1)?.trim() ?? "(empty)";
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, " ⏎ ");
}
