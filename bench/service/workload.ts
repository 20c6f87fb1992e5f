/**
 * The conversations every service scenario sends: stretches of about 100 KB
 * of JSON cut from real agent sessions in the shared corpus.
 *
 * Built conversations would not do here: their text is slices of one filler
 * string, which a compressor packs far tighter than real tool output, so the Redis
 * bytes per job (and the codec's CPU) would look better than they are. Each
 * stretch starts at a prompt, so no tool result lacks its call, and runs
 * until it holds ~100 KB and no call is left unanswered, so the summarizer
 * sees ordinary work, not a cut mid-round.
 */
import path from "node:path";
import { corpusDir, loadClaudeCodeSession, loadPiSession, type AnthropicCorpusMessage } from "../../test/helpers/corpus.js";

/** The size the goals are stated for. */
export const TARGET_BYTES = 100_000;

/** How many stretches every service scenario cycles through, so their figures describe the same jobs. */
export const SCENARIO_CONVERSATIONS = 16;

/** Stretches that grew past this (one huge message at their end) are left out, so every job is ~100 KB. */
const MAX_BYTES = 115_000;

/**
 * Every request asks for a manual compaction in a 200k window keeping the
 * newest 8,000 tokens, so each stretch (25-35k tokens) has most of its
 * history to summarize and the API never answers "nothing to compact".
 */
export const CONTEXT_WINDOW = 200_000;
export const KEEP_RECENT_TOKENS = 8_000;

/** The body of `POST /v1/compactions` without the callback URL. */
export interface CompactionRequest {
  readonly messages: readonly AnthropicCorpusMessage[];
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

function hasToolResults(message: AnthropicCorpusMessage): boolean {
  return Array.isArray(message.content) && message.content.some((block) => (block as { type?: unknown }).type === "tool_result");
}

function makesCalls(message: AnthropicCorpusMessage | undefined): boolean {
  return (
    message?.role === "assistant" &&
    Array.isArray(message.content) &&
    message.content.some((block) => (block as { type?: unknown }).type === "tool_use")
  );
}

/** Consecutive ~100 KB stretches of one session, each opening at a prompt. */
function stretches(messages: readonly AnthropicCorpusMessage[]): { start: number; end: number; bytes: number }[] {
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
    while (end < messages.length && (bytes < TARGET_BYTES || makesCalls(messages[end - 1]))) bytes += sizes[end++]!;
    if (bytes < TARGET_BYTES) break;
    if (bytes <= MAX_BYTES) found.push({ start, end, bytes });
    start = end;
  }
  return found;
}

/** Up to `count` stretches, taken from the sessions in turn so every source is represented. */
export function corpusWorkloads(count: number): Workload[] {
  const perSession = SESSIONS.map(({ file, load }) => {
    const { messages } = load(path.join(corpusDir, file));
    const label = path.basename(file, ".jsonl").slice(0, 18);
    return stretches(messages).map(({ start, end }): Workload => {
      const request: CompactionRequest = {
        messages: messages.slice(start, end),
        contextWindow: CONTEXT_WINDOW,
        settings: { keepRecentTokens: KEEP_RECENT_TOKENS },
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
