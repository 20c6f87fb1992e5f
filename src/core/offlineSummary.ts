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
 * section leaves unused passes to the next, and what the last leaves goes
 * back, in order, to the sections that had more to say. Every line stands
 * for something an agent acts on by name: an edit is shown as the lines it
 * changed, a command by its verdict line. The output is deterministic: the
 * same messages and budget give the same text. A previous summary is merged
 * section by section rather than nested, so successive compactions keep one
 * summary bounded by the summary's cap; a previous summary in another format
 * (a model's) becomes the "Earlier summary" section. Either way it is kept
 * whole, ahead of this range's items: it is the only record of everything
 * before the range (only a newer "where the work stopped" replaces its own).
 */
import { declaredNames } from "./declaredNames.js";
import { MODIFYING_TOOL, pathsIn } from "./fileOperations.js";
import type { Block, Message } from "./message.js";
import { pathLine } from "./pathLine.js";
import { relativeTo } from "./pathRoot.js";
import { clipMiddle } from "./clipText.js";
import type { TokenEstimator } from "./tokenEstimator.js";

/**
 * The whole offline summary's ceiling, prose plus the pinned requests (the
 * file lists aside), whatever the summary budget. An extractive summary grows
 * with the material while each added line is worth less; past this size it
 * crowds out the verbatim tail, which holds the same facts better. The prose
 * gets what the requests leave (see the compactor); the margin below 5,000
 * covers the headings that join a split turn's summaries.
 */
export const OFFLINE_SUMMARY_TOKENS = 4_800;

/**
 * When every item fits with room to spare, the items' character limits below
 * are multiplied by up to this much, as long as every item still fits whole.
 */
const MAX_DETAIL_SCALE = 3;
/** One item is one line, clipped to this many characters (times the detail scale). */
const ITEM_CHARS = 300;
/** The last reply is the agent's own account of where it is: kept longer. */
const LAST_REPLY_CHARS = 800;
/** An item is clipped to fit rather than dropped when at least this much room is left. */
const MIN_CLIPPED_TOKENS = 40;
/** The part of an edit's written text kept in an item. */
const EDIT_CHARS = 240;
/** The part of an edit's item given to the lines it removed. */
const REMOVED_CHARS = 80;
/** The names past an edit's opening, listed after it, are clipped to this many characters. */
const EDIT_NAMES_CHARS = 200;
/** Names in code that are unlikely to be plain words: Module.Names, snake_case, camelCase. */
const CODE_NAME = /\b(?:[A-Z][A-Za-z0-9]+(?:\.[A-Z][A-Za-z0-9]+)+|[a-z][a-z0-9]*(?:_[a-z0-9]+)+[?!]?|[a-z]+[A-Z][A-Za-z0-9]*)\b/g;
/** Argument names that hold the text an edit writes, in order of preference. */
const WRITTEN_ARGUMENTS = ["new_string", "newText", "new_str", "content", "patch", "diff", "text"];
/** Argument names that hold the text a replacement edit replaces. */
const REPLACED_ARGUMENTS = ["old_string", "oldText", "old_str"];
/** Written arguments in diff form, whose added lines start with `+`. */
const PATCH_ARGUMENTS = ["patch", "diff"];
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

/** Names listed on one line of the identifiers section. */
const IDENTIFIERS_PER_LINE = 8;

/** Files the agent writes as prose for itself or its reader, whose backticked names are identifiers. */
const DOCUMENT_PATH = /\.(?:md|markdown|mdx|txt|rst|adoc)$/i;

/** A line of command output that reports a count of results or an outcome. */
const VERDICT =
  /\b\d+\s+(?:tests?|examples?|specs?|suites?|assertions?|doctests?|properties|failures?|failed|passed|passing|pending|skipped|errors?|warnings?|files? changed|problems?)\b|^\s*(?:ok|FAIL|PASS|error|Error|BUILD \w+)\b/;

interface Item {
  /** Items with the same key are one item; the newest wins. */
  readonly key: string;
  readonly text: string;
  /** The messages this item stands for. */
  readonly messages: readonly Message[];
  /** Never clipped to fit: half a list of names is worse than a shorter list. */
  readonly whole?: true;
  /**
   * From the previous summary, which is the only record of everything before
   * this range: placed before this range's items, whole, and cut only when it
   * alone outgrows the summary's cap.
   */
  readonly carried?: true;
}

export interface OfflineSummaryInput {
  /** The whole range being summarized, oldest first. */
  readonly messages: readonly Message[];
  /** The previous summary's prose (file and request blocks already split off). */
  readonly previousSummary: string | undefined;
  /** The room for what this summary extracts from the range (its own ceiling, see the compactor). */
  readonly budgetTokens: number;
  /**
   * The summary's cap: the room the previous summary may take. What it
   * leaves, up to `budgetTokens`, goes to the range's own items.
   */
  readonly capTokens: number;
  /**
   * Paths under this directory are written relative to it (see pathRoot.ts);
   * whoever places the summary states it once above it.
   */
  readonly pathRoot?: string | undefined;
}

export interface OfflineSummary {
  readonly text: string;
  /** Messages of the range no item of the summary stands for. */
  readonly unrepresented: readonly Message[];
  /** Characters of the previous summary left out because it alone did not fit the cap; 0 when it is all there. */
  readonly previousSummaryCharsCut: number;
}

export function buildOfflineSummary(input: OfflineSummaryInput, estimator: TokenEstimator): OfflineSummary {
  const previous = parseSections(input.previousSummary ?? "");
  const room = { budget: Math.min(input.budgetTokens, OFFLINE_SUMMARY_TOKENS), cap: input.capTokens };
  // A range with little to say leaves most of the budget unused: show more of each item
  // (longer edits, commands, replies) while every item still fits whole.
  let summary = render(extractItems(input.messages, input.pathRoot, 1), previous, room, input.messages, estimator);
  for (let scale = 2; scale <= MAX_DETAIL_SCALE && summary.complete; scale++) {
    const detailed = render(extractItems(input.messages, input.pathRoot, scale), previous, room, input.messages, estimator);
    if (!detailed.complete) break;
    summary = detailed;
  }
  return { text: summary.text, unrepresented: summary.unrepresented, previousSummaryCharsCut: summary.previousSummaryCharsCut };
}

/**
 * The summary of `fresh` and `previous` items; complete when every fresh item
 * fit without being clipped. The previous summary's items that still stand
 * (see mergeItems) go in first, whole, within `room.cap`: dropping or
 * clipping them to make room would lose the only record of what came before.
 * The fresh items share what they leave, up to `room.budget`.
 */
function render(
  fresh: Map<SectionName, Item[]>,
  previous: Map<SectionName, Item[]>,
  room: { readonly budget: number; readonly cap: number },
  messages: readonly Message[],
  estimator: TokenEstimator,
): OfflineSummary & { complete: boolean } {
  const sections = SECTIONS.map((spec) => {
    const merged = mergeItems(fresh.get(spec.name) ?? [], previous.get(spec.name) ?? [], spec.replaces === true);
    return {
      spec,
      items: layOut(spec.name, merged.filter((item) => item.carried !== true)),
      carried: layOut(spec.name, merged.filter((item) => item.carried === true)),
      next: 0,
      lines: [] as string[],
      carriedLines: [] as string[],
    };
  });
  type Section = (typeof sections)[number];
  const headingCost = (section: Section): number =>
    section.lines.length === 0 && section.carriedLines.length === 0 ? estimator.countText(section.spec.heading) + 1 : 0;

  // The previous summary first: whole while it fits the cap, and when it does not, cut where the cap runs out.
  let capLeft = room.cap;
  let previousSummaryCharsCut = 0;
  for (const section of sections) {
    for (const item of section.carried) {
      const line = fitLine(`- ${item.text}`, capLeft - headingCost(section), estimator, true);
      if (line === undefined) {
        previousSummaryCharsCut += item.text.length;
        continue;
      }
      capLeft -= headingCost(section) + line.cost;
      section.carriedLines.push(line.text);
      previousSummaryCharsCut += line.charsCut;
    }
  }

  const represented = new Set<Message>();
  let clipped = false;
  /** Adds the section's next items within `room`; returns the room left. */
  const fill = (section: Section, room: number): number => {
    let left = room - headingCost(section);
    const before = section.lines.length;
    while (section.next < section.items.length) {
      const item = section.items[section.next]!;
      const line = fitLine(`- ${item.text}`, left, estimator, item.whole !== true);
      if (line === undefined) break;
      left -= line.cost;
      section.next++;
      section.lines.push(line.text);
      for (const m of item.messages) represented.add(m);
      if (line.charsCut > 0) {
        clipped = true;
        break;
      }
    }
    return section.lines.length === before ? room : left;
  };
  const budget = Math.max(0, Math.min(room.budget, capLeft));
  // First pass: each section its share, plus what the sections before it left unused.
  let carry = 0;
  for (const section of sections) carry = fill(section, Math.floor(budget * section.spec.share) + carry);
  // Second pass: what is still unused goes, in section order, to the sections that had more to say.
  for (const section of sections) carry = fill(section, carry);

  // Newest first within a section: this range's items, then the previous summary's.
  const written = sections.map((s) => ({ heading: s.spec.heading, lines: [...s.lines, ...s.carriedLines] })).filter((s) => s.lines.length > 0);
  const parts = written.map((s) => `${s.heading}\n${s.lines.join("\n")}`);
  const text = parts.length > 0 ? parts.join("\n\n") : "## Where the work stopped\n- (nothing to report)";
  const complete = !clipped && sections.every((section) => section.next === section.items.length);
  return { text, unrepresented: messages.filter((m) => !represented.has(m)), previousSummaryCharsCut, complete };
}

/**
 * A line and its cost when it fits `room`. A line that does not fit (a long
 * earlier summary, a long last reply) is clipped to head and tail to fill the
 * room left, rather than dropped, so no section is lost to one large item.
 */
function fitLine(
  text: string,
  room: number,
  estimator: TokenEstimator,
  clippable: boolean,
): { text: string; cost: number; charsCut: number } | undefined {
  const cost = estimator.countText(text) + 1;
  if (cost <= room) return { text, cost, charsCut: 0 };
  if (!clippable || room < MIN_CLIPPED_TOKENS) return undefined;
  const kept = Math.floor((text.length * room * 0.9) / cost);
  const clipped = clipMiddle(text, kept);
  const clippedCost = estimator.countText(clipped) + 1;
  return clippedCost <= room ? { text: clipped, cost: clippedCost, charsCut: text.length - kept } : undefined;
}

/**
 * Identifiers are listed several to a line: one line each spent a line's
 * overhead on every name, and the list is read as a list anyway.
 */
function layOut(section: SectionName, items: Item[]): Item[] {
  if (section !== "identifiers") return items;
  const lines: Item[] = [];
  for (let i = 0; i < items.length; i += IDENTIFIERS_PER_LINE) {
    const group = items.slice(i, i + IDENTIFIERS_PER_LINE);
    lines.push({ key: group[0]!.key, text: group.map((item) => item.text).join(", "), messages: group.flatMap((item) => item.messages), whole: true });
  }
  return lines;
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
  /** The paths the call names, as the summary writes them (relative to the path root, each one line). */
  readonly paths: readonly string[];
  result?: { readonly block: Extract<Block, { type: "toolResult" }>; readonly message: Message };
}

/** Every section's items from the range, newest first. */
function extractItems(messages: readonly Message[], pathRoot: string | undefined, scale: number): Map<SectionName, Item[]> {
  const calls: Call[] = [];
  const byId = new Map<string, Call>();
  for (const message of messages) {
    for (const block of message.blocks) {
      if (block.type === "toolCall") {
        const call: Call = { block, message, paths: pathsIn(block.input).map((path) => pathLine(relativeTo(pathRoot, path))) };
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
    ["stopped", stoppedItems(messages, newestCalls, scale)],
    ["errors", newestCalls.flatMap((call) => errorItem(call, scale))],
    ["changed", changedItems(newestCalls, scale)],
    ["edits", newestCalls.flatMap((call) => editItem(call, scale))],
    ["commands", newestCalls.flatMap((call) => commandItem(call, scale))],
    ["findings", findingItems(messages, scale)],
    ["identifiers", identifierItems(messages)],
  ]);
}

function stoppedItems(messages: readonly Message[], newestCalls: readonly Call[], scale: number): Item[] {
  const items: Item[] = [];
  const lastReply = [...messages].reverse().find((m) => m.kind === "assistant" && textOf(m) !== "");
  if (lastReply !== undefined) {
    items.push({ key: "reply", text: `Last reply: ${oneLine(clipMiddle(textOf(lastReply), LAST_REPLY_CHARS * scale))}`, messages: [lastReply] });
  }
  const todos = newestCalls.find((c) => Array.isArray((c.block.input as { todos?: unknown } | null)?.todos));
  if (todos !== undefined) {
    const list = (todos.block.input as { todos: unknown[] }).todos.map(todoText).filter((t) => t !== "");
    if (list.length > 0) items.push({ key: "todos", text: `Todo list: ${list.join("; ")}`, messages: withResult(todos) });
  }
  const last = newestCalls[0];
  if (last !== undefined) items.push({ key: "last-call", text: `Last tool call: ${callText(last, scale)}`, messages: withResult(last) });
  return items;
}

function todoText(todo: unknown): string {
  if (todo === null || typeof todo !== "object") return typeof todo === "string" ? todo : "";
  const t = todo as { content?: unknown; status?: unknown };
  const content = typeof t.content === "string" ? t.content : "";
  return typeof t.status === "string" ? `[${t.status}] ${content}` : content;
}

function errorItem(call: Call, scale: number): Item[] {
  const result = call.result;
  if (result === undefined) return [];
  const failure = result.block.text.split("\n").find(reportsFailure);
  if (!result.block.isError && (commandOf(call) === undefined || failure === undefined)) return [];
  const line = failure ?? firstLine(result.block.text);
  const subject = callSubject(call, scale);
  return [{ key: `error:${subject}:${line}`, text: `${subject} → ${oneLine(clipMiddle(line, SNIPPET_CHARS * scale))}`, messages: withResult(call) }];
}

/** One item per modified path: the tools that changed it and the names written into it. */
function changedItems(newestCalls: readonly Call[], scale: number): Item[] {
  const byPath = new Map<string, { tools: string[]; names: string[]; messages: Message[] }>();
  for (const call of newestCalls) {
    if (!MODIFYING_TOOL.test(call.block.name)) continue;
    for (const path of call.paths) {
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
    return { key: changedKeyOf(path), text: clipMiddle(`${path} (${tools.join(", ")})${declares}`, ITEM_CHARS * scale), messages: entry.messages };
  });
}

/**
 * What an edit wrote: the code itself names the fields, relations and calls
 * the next steps build on, which a declaration list misses. A replacement or
 * a patch is shown as its change, the lines it removed (`-`, briefly) and the
 * lines it added (`+`): the lines it kept are context the agent copied, not
 * work it did. A new file is shown by its opening.
 */
function editItem(call: Call, scale: number): Item[] {
  if (!MODIFYING_TOOL.test(call.block.name)) return [];
  const input = call.block.input as Record<string, unknown> | null;
  const key = WRITTEN_ARGUMENTS.find((k) => typeof input?.[k] === "string" && (input[k] as string).trim() !== "");
  if (key === undefined) return [];
  const change = changeOf(input!, key);
  const path = call.paths[0] ?? call.block.name;
  const removed = change.removed === "" ? "" : `-${oneLine(clipMiddle(change.removed, REMOVED_CHARS * scale))} `;
  const shown = `${removed}${change.removed === "" ? "" : "+"}${oneLine(clipMiddle(change.added, EDIT_CHARS * scale - removed.length))}`;
  const names = [...new Set(change.added.match(CODE_NAME) ?? [])].filter((name) => !shown.includes(name));
  const uses = names.length > 0 ? `; also names ${clipMiddle(names.join(", "), EDIT_NAMES_CHARS * scale)}` : "";
  return [{ key: `edit:${path}:${(input![key] as string).slice(0, 80)}`, text: `${path}: ${shown}${uses}`, messages: withResult(call) }];
}

/**
 * The lines an edit removed and added: of a replacement, the lines of each
 * side the other does not have; of a patch, its `-` and `+` lines; of a whole
 * file, all of it, added.
 */
function changeOf(input: Record<string, unknown>, writtenKey: string): { removed: string; added: string } {
  const written = (input[writtenKey] as string).trim();
  const lines = (text: string) => text.split("\n");
  let removed: string[] = [];
  let added: string[] | undefined;
  if (PATCH_ARGUMENTS.includes(writtenKey)) {
    removed = lines(written).filter((line) => line.startsWith("-") && !line.startsWith("---")).map((line) => line.slice(1));
    added = lines(written).filter((line) => line.startsWith("+") && !line.startsWith("+++")).map((line) => line.slice(1));
  } else {
    const replaced = REPLACED_ARGUMENTS.map((k) => input[k]).find((v): v is string => typeof v === "string");
    if (replaced !== undefined) {
      const before = new Set(lines(replaced).map((line) => line.trim()));
      const after = new Set(lines(written).map((line) => line.trim()));
      removed = lines(replaced).filter((line) => !after.has(line.trim()));
      added = lines(written).filter((line) => !before.has(line.trim()));
    }
  }
  const addedText = added?.join("\n").trim() ?? "";
  return { removed: removed.join("\n").trim(), added: addedText === "" && removed.length === 0 ? written : addedText };
}

function commandItem(call: Call, scale: number): Item[] {
  const command = commandOf(call);
  if (command === undefined) return [];
  const outcome = call.result === undefined ? "(no result)" : verdictLine(call.result.block.text);
  return [{ key: `command:${command}`, text: `\`${oneLine(clipMiddle(command, SNIPPET_CHARS * scale))}\` → ${oneLine(clipMiddle(outcome, SNIPPET_CHARS * scale))}`, messages: withResult(call) }];
}

function findingItems(messages: readonly Message[], scale: number): Item[] {
  const items: Item[] = [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]!;
    if (message.kind !== "assistant") continue;
    const lines = textOf(message)
      .split(/\n+|(?<=[.!?])\s+(?=[A-Z`])/)
      .map((l) => l.trim().replace(/^[-*#>\s]+/, ""))
      .filter((l) => l.length > 12 && FINDING.test(l));
    for (const line of lines.reverse()) items.push({ key: `finding:${line}`, text: oneLine(clipMiddle(line, ITEM_CHARS * scale)), messages: [message] });
  }
  return items;
}

/**
 * Backticked names in the user's and the agent's prose, and in the documents
 * the agent writes for itself (a plan, notes, docs), most mentioned first
 * (newest first among equals). Backticks in code are not names, so files of
 * code are not read for them.
 */
function identifierItems(messages: readonly Message[]): Item[] {
  const seen = new Map<string, { count: number; last: number; message: Message }>();
  messages.forEach((message, position) => {
    if (message.kind !== "assistant" && message.kind !== "user") return;
    for (const match of [textOf(message), ...documentsWritten(message)].join("\n").matchAll(IDENTIFIER)) {
      const name = match[1]!.trim();
      const entry = seen.get(name);
      seen.set(name, { count: (entry?.count ?? 0) + 1, last: position, message });
    }
  });
  return [...seen]
    .sort(([, a], [, b]) => b.count - a.count || b.last - a.last)
    .map(([name, entry]) => ({ key: `identifier:${name}`, text: `\`${name}\``, messages: [entry.message] }));
}

/** The prose documents a message's tool calls write: a plan passed to a tool, or a Markdown or text file. */
function documentsWritten(message: Message): string[] {
  return message.blocks.flatMap((block) => {
    if (block.type !== "toolCall" || block.input === null || typeof block.input !== "object") return [];
    const input = block.input as Record<string, unknown>;
    const plan = typeof input.plan === "string" ? [input.plan] : [];
    const isDocument = MODIFYING_TOOL.test(block.name) && pathsIn(input).some((path) => DOCUMENT_PATH.test(path));
    return isDocument ? [...plan, ...WRITTEN_ARGUMENTS.flatMap((key) => (typeof input[key] === "string" ? [input[key]] : []))] : plan;
  });
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
      if (lines.some((l) => l.trim() !== "")) add("earlier", [{ key: `earlier:${body}`, text: body, messages: [], carried: true }]);
      continue;
    }
    const items = lines.filter((l) => l.startsWith("- ")).map((l) => l.slice(2));
    if (name === "identifiers") {
      // Several to a line, each `quoted`: read back one by one, so they merge with this range's by name.
      const names = items.flatMap((l) => l.split(/(?<=`), (?=`)/));
      add(name, names.map((t) => ({ key: `identifier:${t.replace(/^`|`$/g, "")}`, text: t, messages: [], carried: true })));
      continue;
    }
    add(name, items.map((t) => ({ key: name === "changed" ? changedKey(t) : `${name}:${t}`, text: t, messages: [], carried: true })));
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
function callSubject(call: Call, scale: number): string {
  const command = commandOf(call);
  if (command !== undefined) return `\`${oneLine(clipMiddle(command, SNIPPET_CHARS * scale))}\``;
  const path = call.paths[0];
  return path === undefined ? call.block.name : `${call.block.name} ${path}`;
}

function callText(call: Call, scale: number): string {
  const outcome = call.result === undefined ? "(no result yet)" : verdictLine(call.result.block.text);
  return `${callSubject(call, scale)} → ${oneLine(clipMiddle(outcome, SNIPPET_CHARS * scale))}`;
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

/**
 * The line of a command's output that says how it went: the last one that
 * counts something ("43 tests, 0 failures", "2 files changed") or states an
 * outcome, else the last line. Test runners and build tools print their
 * verdict near the end but often not last ("Randomized with seed 1234").
 */
function verdictLine(text: string): string {
  const lines = text.split("\n").filter((l) => l.trim() !== "");
  return lines.findLast((l) => VERDICT.test(l))?.trim() ?? lastLine(text);
}

function lastLine(text: string): string {
  const lines = text.split("\n").filter((l) => l.trim() !== "");
  return lines.at(-1)?.trim() ?? "(empty)";
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, " ⏎ ");
}
