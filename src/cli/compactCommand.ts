/**
 * `compactd compact <file|dir|->`: the core, in-process, on files.
 *
 * No Redis and no service: it parses the conversation, compacts it with the
 * chosen summarizer and prints the result as one JSON object. Without an API
 * key it uses the offline summarizer, so it works on any machine.
 */
import { readdir, readFile, stat } from "node:fs/promises";
import path from "node:path";
import {
  createCompactor,
  DEFAULT_RESERVE_TOKENS,
  minimumContextWindow,
  InvalidConversationError,
  NothingToCompactError,
  OFFLINE_SUMMARIZER,
  parseConversation,
  type BudgetOverrides,
  type FormatOption,
  type Reason,
  type Result,
  type SummarizerChoice,
  threshold,
} from "../core/index.js";
import { isUrlWithScheme, URL_WITHOUT_SPACES } from "../http/urlWithScheme.js";
import { MODEL_ID, MODEL_ID_FORM } from "../summarizers/modelId.js";
import type { CommandOutput } from "./commandOutput.js";
import { readConversationInput, type ConversationInput } from "./jsonInput.js";
import { SESSION_LOG_FORMATS } from "./sessionLogs.js";
import { EXIT, UsageError } from "./usageError.js";

export interface CompactCommandOptions extends BudgetOverrides {
  readonly contextWindow: number;
  readonly reason: Reason;
  readonly summarizer?: "anthropic" | "offline";
  readonly model?: string;
  readonly format: FormatOption;
  readonly usageTokens?: number;
}

export interface Io {
  readonly stdout: NodeJS.WritableStream;
  readonly stderr: NodeJS.WritableStream & { isTTY?: boolean };
  readonly stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  readonly env: NodeJS.ProcessEnv;
}

/**
 * Runs the command; returns the process exit code. Results go to `output`:
 * once it cannot be written the command stops, cancelling a summary in
 * progress (the caller then reports the failed write's status).
 */
export async function runCompact(target: string, options: CompactCommandOptions, io: Io, output: CommandOutput): Promise<number> {
  // A model asked for and a summarizer that uses none: whichever the user meant, one of them would be ignored.
  if (options.summarizer === OFFLINE_SUMMARIZER && options.model !== undefined) {
    throw new UsageError("--model names the model of the Anthropic summarizer; it has no use with --summarizer offline");
  }
  // Chosen on first use, so input errors are reported alone, before any note about the summarizer.
  let chosen: Promise<SummarizerChoice> | undefined;
  const summarizer = () => (chosen ??= chooseSummarizer(options, io));
  if (target !== "-" && (await isDirectory(target))) return compactDirectory(target, options, summarizer, io, output);

  const outcome = await compactOne(await readInput(target, io), target, options, summarizer, io, output.stopped);
  output.write(`${JSON.stringify(outcome)}\n`);
  return "status" in outcome ? EXIT.nothingToCompact : EXIT.compacted;
}

/** What stdout says when there is nothing to compact: the service's answer, `stillAboveThreshold` included. */
interface NothingToCompact {
  readonly status: "nothing_to_compact";
  readonly stillAboveThreshold: boolean;
}

/**
 * A directory is compacted file by file (`*.json`, and `*.jsonl` for the
 * session logs of a Claude Code project folder), one JSON line per file, so
 * one bad file does not hide the results of the others. Progress goes to
 * stderr only when a person is watching it.
 *
 * The exit code reads like a single file's: 2 when any file was bad input,
 * else 0 when at least one was compacted, else 3 (nothing anywhere to compact).
 */
async function compactDirectory(
  dir: string,
  options: CompactCommandOptions,
  summarizer: () => Promise<SummarizerChoice>,
  io: Io,
  output: CommandOutput,
): Promise<number> {
  const files = (await readdir(dir)).filter((f) => f.endsWith(".json") || f.endsWith(".jsonl")).sort();
  if (files.length === 0) throw new UsageError(`${dir}: no .json or .jsonl files in this directory`);
  let compacted = false;
  let badInput = false;
  for (const [i, name] of files.entries()) {
    if (output.stopped.aborted) break;
    const file = path.join(dir, name);
    if (io.stderr.isTTY) io.stderr.write(`\r[${i + 1}/${files.length}] ${name}\x1b[K`);
    try {
      const outcome = await compactOne(await readInput(file, io), file, options, summarizer, io, output.stopped);
      const nothing = "status" in outcome;
      const line = nothing ? { file, ...outcome } : { file, status: "compacted", ...outcome };
      compacted ||= !nothing;
      output.write(`${JSON.stringify(line)}\n`);
    } catch (err) {
      if (!(err instanceof UsageError)) throw err;
      output.write(`${JSON.stringify({ file, status: "error", error: err.message })}\n`);
      badInput = true;
    }
  }
  if (io.stderr.isTTY) io.stderr.write("\n");
  if (badInput) return EXIT.usage;
  return compacted ? EXIT.compacted : EXIT.nothingToCompact;
}

async function compactOne(
  { input, sessionLog }: ConversationInput,
  source: string,
  options: CompactCommandOptions,
  summarizer: () => Promise<SummarizerChoice>,
  io: Io,
  signal: AbortSignal,
): Promise<Result | NothingToCompact> {
  let conversation;
  try {
    conversation = parseConversation(input, options.format);
  } catch (err) {
    if (err instanceof InvalidConversationError) throw new UsageError(`${inputName(source)}: ${err.message}${sessionLog === undefined ? "" : ` (in the conversation converted from ${SESSION_LOG_FORMATS[sessionLog].label})`}`);
    throw err;
  }
  if (sessionLog !== undefined) {
    say(io, source, `read as ${SESSION_LOG_FORMATS[sessionLog].label}: the ${conversation.messages.length} messages its agent sent the model`);
  }
  const smallest = minimumContextWindow(options.reserveTokens);
  if (options.contextWindow < smallest) {
    throw new UsageError(
      `--context-window ${options.contextWindow} leaves no room for the conversation: ${options.reserveTokens ?? DEFAULT_RESERVE_TOKENS} tokens are reserved for the next response (--reserve-tokens), so the window must be at least ${smallest}`,
    );
  }
  const compactor = createCompactor({
    settings: {
      contextWindow: options.contextWindow,
      reserveTokens: options.reserveTokens,
      keepRecentTokens: options.keepRecentTokens,
      maxSummaryTokens: options.maxSummaryTokens,
      stallTimeoutMs: options.stallTimeoutMs,
    },
    summarizer: await summarizer(),
  });
  if (compactor === null) throw new UsageError("--context-window must be a positive number of tokens");
  let result: Result;
  try {
    result = await compactor.compact(conversation, { reason: options.reason, usageTokens: options.usageTokens, signal });
  } catch (err) {
    if (!(err instanceof NothingToCompactError)) throw err;
    if (err.stillAboveThreshold) {
      sayAboveThreshold(io, source, threshold(compactor.settings), "nothing to compact, yet the context is still", "compaction cannot shrink it: shrink the largest messages, or use a larger window");
    }
    return { status: "nothing_to_compact", stillAboveThreshold: err.stillAboveThreshold };
  }
  sayWhatFellShort(source, result, threshold(compactor.settings), io);
  return result;
}

/**
 * A result can be a compaction (exit 0, the result on stdout) and still not
 * the one asked for, in two ways the JSON says but a page of it hides, so
 * stderr says them, a line each:
 * - degraded: the model failed and the offline summary stands in (each
 *   distinct cause once: the two attempts of a call often fail alike);
 * - still above the threshold (window minus reserve; the result's
 *   `stillAboveThreshold`): what is kept verbatim (the system prompt, the
 *   newest messages or tool call) or the summary beside it is larger than
 *   that, and the agent will overflow again however often it compacts.
 */
function sayWhatFellShort(source: string, result: Result, room: number, io: Io): void {
  if (result.degraded) say(io, source, `degraded, the offline summary stands in: ${[...new Set(result.degradation.map((d) => d.message))].join("; ")}`);
  if (result.stillAboveThreshold) {
    sayAboveThreshold(
      io,
      source,
      room,
      `still ${result.tokensAfter} tokens after compaction,`,
      "compacting again will not help: lower --keep-recent-tokens or --max-summary-tokens, shrink the largest messages, or use a larger window",
    );
  }
}

/**
 * The line for a context left above the threshold (`room` tokens), by a
 * compaction or by nothing to compact (NothingToCompactError's
 * `stillAboveThreshold`): either way the agent will overflow however often
 * it asks, so the line says `what` happened and the `remedy`.
 */
function sayAboveThreshold(io: Io, source: string, room: number, what: string, remedy: string): void {
  say(io, source, `${what} above the ${room} the window leaves besides the reserve (the system prompt and the newest messages are kept verbatim, whatever their size); ${remedy}`);
}

/** One line on stderr about one input; on a terminal it first clears a directory run's progress line. */
function say(io: Io, source: string, what: string): void {
  io.stderr.write(`${io.stderr.isTTY ? "\r\x1b[K" : ""}compactd: ${inputName(source)}: ${what}\n`);
}

/**
 * Anthropic when a key is available, else the offline summarizer with a note,
 * so a first run on a fresh machine works and says what it did. The
 * Anthropic summarizer is loaded only when chosen: importing its SDK takes
 * about 0.3 s, most of an offline run.
 */
async function chooseSummarizer(options: CompactCommandOptions, io: Io): Promise<SummarizerChoice> {
  const apiKey = io.env.ANTHROPIC_API_KEY;
  const choice = options.summarizer ?? (apiKey ? "anthropic" : OFFLINE_SUMMARIZER);
  if (choice === OFFLINE_SUMMARIZER) {
    if (options.summarizer === undefined) {
      io.stderr.write("compactd: ANTHROPIC_API_KEY is not set; using the offline summarizer (structured extract, no model)\n");
    }
    return OFFLINE_SUMMARIZER;
  }
  if (!apiKey) throw new UsageError("--summarizer anthropic needs ANTHROPIC_API_KEY in the environment");
  const model = chosenModel(options, io.env);
  const { createAnthropicSummarizer, DEFAULT_MODEL } = await import("../summarizers/anthropic.js");
  return createAnthropicSummarizer({ apiKey, baseURL: chosenBaseUrl(io.env), model: model ?? DEFAULT_MODEL });
}

/**
 * ANTHROPIC_BASE_URL held to the service's rule (blank is unset, else an
 * http or https URL): a malformed one would only make every summary degrade.
 */
function chosenBaseUrl(env: NodeJS.ProcessEnv): string | undefined {
  const baseUrl = env.ANTHROPIC_BASE_URL?.trim() || undefined;
  if (baseUrl !== undefined && !isUrlWithScheme(baseUrl, ["http:", "https:"])) {
    throw new UsageError(`ANTHROPIC_BASE_URL must be a URL starting with http:// or https://, ${URL_WITHOUT_SPACES}; got ${JSON.stringify(baseUrl.slice(0, 200))}`);
  }
  return baseUrl;
}

/**
 * The model asked for, by --model or else COMPACTD_MODEL (blank is unset, as
 * for the service), held to the service's form of a model id: a malformed one
 * is a usage error here rather than a paid run that degrades on every request.
 */
function chosenModel(options: CompactCommandOptions, env: NodeJS.ProcessEnv): string | undefined {
  const [source, model] = options.model !== undefined ? ["--model", options.model] : ["COMPACTD_MODEL", env.COMPACTD_MODEL?.trim() || undefined];
  if (model !== undefined && !MODEL_ID.test(model)) throw new UsageError(`${source} must be ${MODEL_ID_FORM}; got ${JSON.stringify(model.slice(0, 60))}`);
  return model;
}

async function isDirectory(target: string): Promise<boolean> {
  try {
    return (await stat(target)).isDirectory();
  } catch {
    return false;
  }
}

function readInput(target: string, io: Io): Promise<ConversationInput> {
  return readConversationInput(inputName(target), () => (target === "-" ? readStdin(io) : readFile(target)));
}

/** How messages name the input: its path, or stdin for `-`. */
function inputName(target: string): string {
  return target === "-" ? "stdin" : target;
}

/**
 * Stdin to its end. From a pipe that is the writer closing it; from a
 * terminal it is Ctrl-D, which a person who typed `compact -` by habit may
 * not think of, and a run waiting without a word looks hung: it says so.
 */
async function readStdin(io: Io): Promise<Buffer> {
  if (io.stdin.isTTY) io.stderr.write("compactd: reading the conversation from the terminal; end it with Ctrl-D on a line of its own\n");
  const chunks: Buffer[] = [];
  for await (const chunk of io.stdin) chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks);
}
