/**
 * The conversations every service scenario sends: stretches of about 100 KB
 * of JSON cut from real agent sessions in the shared corpus (and, for what
 * a job costs whatever its size, stretches of a few KB cut the same way).
 *
 * Built conversations would not do here: their text is slices of one filler
 * string, which a compressor packs far tighter than real tool output, so the Redis
 * bytes per job (and the codec's CPU) would look better than they are. Each
 * stretch starts at a prompt, so no tool result lacks its call, and runs
 * until it holds its size and no call is left unanswered, so the summarizer
 * sees ordinary work, not a cut mid-round.
 */
import path from "node:path";
import { corpusDir, loadClaudeCodeSession, loadPiSession, type SessionMessage } from "../../test/helpers/corpus.js";


/** How many stretches every service scenario cycles through, so their figures describe the same jobs. */
export const SCENARIO_CONVERSATIONS = 16;

/** Every request asks for a manual compaction in a 200k window. */
export const CONTEXT_WINDOW = 200_000;

/** How big the stretches are, and how much of each a compaction keeps. */
export interface StretchSize {
  /** A stretch grows until it holds this much request JSON (and no call is left unanswered)... */
  readonly targetBytes: number;
  /** ...and is left out past this (one huge message at its end), so every job is about the same size. */
  readonly maxBytes: number;
  /** The request's keep-recent budget: small enough that the API never answers "nothing to compact". */
  readonly keepRecentTokens: number;
}

/**
 * The size the goals are stated for: ~100 KB, 25-35k tokens, keeping
 * the newest 8,000, so most of each stretch's history is summarized.
 */
export const ORDINARY_STRETCHES: StretchSize = { targetBytes: 100_000, maxBytes: 115_000, keepRecentTokens: 8_000 };

/**
 * A few KB each (450-1,500 tokens), keeping the newest 300 (the smallest
 * stretches hold under 500): jobs whose work in proportion to their size is
 * slight, so what the service adds to them is nearly all what it adds to
 * every job, whatever its size.
 */
export const SMALL_STRETCHES: StretchSize = { targetBytes: 4_000, maxBytes: 8_000, keepRecentTokens: 300 };

/** The body of `POST /v1/compactions` without the callback URL. */
export interface CompactionRequest {
  readonly messages: readonly SessionMessage[];
  readonly contextWindow: number;
  readonly settings: { readonly keepRecentTokens: number };
  readonly reason: "manual";
}

export interface Workload {
  /** Session and message range, for the report. */
  readonly name: string;
  readonly request: CompactionRequest;
  /** Bytes of the request as JSON: the raw size the Redis goal is measured against. */
  readonly jsonBytes: number;
}

const SESSIONS = [
  { file: "spotter-claude-code/258c7280-ae70-4798-800f-63464d01a85d.jsonl", load: loadClaudeCodeSession },
  { file: "spotter-claude-code/8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl", load: loadClaudeCodeSession },
  { file: "pi-mono-sessions/before-compaction.jsonl", load: loadPiSession },
  { file: "pi-mono-sessions/large-session.jsonl", load: loadPiSession },
] as const;

function hasToolResults(message: SessionMessage): boolean {
  return Array.isArray(message.content) && message.content.some((block) => (block as { type?: unknown }).type === "tool_result");
}

function makesCalls(message: SessionMessage | undefined): boolean {
  return (
    message?.role === "assistant" &&
    Array.isArray(message.content) &&
    message.content.some((block) => (block as { type?: unknown }).type === "tool_use")
  );
}

/** Consecutive stretches of one session of about `size.targetBytes`, each opening at a prompt. */
function stretches(messages: readonly SessionMessage[], size: StretchSize): { start: number; end: number; bytes: number }[] {
  const sizes = messages.map((m) => Buffer.byteLength(JSON.stringify(m)));
  const found: { start: number; end: number; bytes: number }[] = [];
  let start = 0;
  while (start < messages.length) {
    const first = messages[start]!;
    if (first.role !== "user" || hasToolResults(first)) {
      start++;
      continue;
    }
    let end = start;
    let bytes = 0;
    while (end < messages.length && (bytes < size.targetBytes || makesCalls(messages[end - 1]))) bytes += sizes[end++]!;
    if (bytes < size.targetBytes) break;
    if (bytes <= size.maxBytes) found.push({ start, end, bytes });
    start = end;
  }
  return found;
}

/** Up to `count` stretches, taken from the sessions in turn so every source is represented. */
export function corpusWorkloads(count: number, size: StretchSize = ORDINARY_STRETCHES): Workload[] {
  const perSession = SESSIONS.map(({ file, load }) => {
    const { messages } = load(path.join(corpusDir, file));
    const label = path.basename(file, ".jsonl").slice(0, 18);
    return stretches(messages, size).map(({ start, end }): Workload => {
      const request: CompactionRequest = {
        messages: messages.slice(start, end),
        contextWindow: CONTEXT_WINDOW,
        settings: { keepRecentTokens: size.keepRecentTokens },
        reason: "manual",
      };
      return { name: `${label} [${start}, ${end})`, request, jsonBytes: Buffer.byteLength(JSON.stringify(request)) };
    });
  });
  const picked: Workload[] = [];
  for (let round = 0; picked.length < count && perSession.some((list) => list.length > round); round++) {
    for (const list of perSession) if (list[round] !== undefined && picked.length < count) picked.push(list[round]!);
  }
  return picked;
}
