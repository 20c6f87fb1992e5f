/**
 * The `compactd` command line: `compact` runs the core in-process; `serve`,
 * `worker` and `dev` run the service.
 */
import { createRequire } from "node:module";
import { Command, CommanderError, InvalidArgumentError, Option } from "commander";
import {
  DEFAULT_KEEP_RECENT_TOKENS,
  DEFAULT_RESERVE_TOKENS,
  DEFAULT_SUMMARIZATION_STALL_TIMEOUT_MS,
  MAX_SUMMARIZATION_STALL_TIMEOUT_MS,
  MAX_TOKEN_COUNT,
  MIN_SUMMARIZATION_STALL_TIMEOUT_MS,
  REASONS,
  type FormatOption,
  type Reason,
} from "../core/index.js";
import { DEFAULT_API_PORT, DEFAULT_METRICS_PORT } from "../servicePorts.js";
import { CommandOutput } from "./commandOutput.js";
import { runCompact, type CompactCommandOptions, type Io } from "./compactCommand.js";
import type { ServiceKind } from "./serviceCommand.js";
import { EXIT, UsageError, usageLine } from "./usageError.js";

const defaultIo: Io = { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, env: process.env };

/** Parses `argv` (without node and script), runs the command, returns the exit code. */
export async function main(argv: readonly string[], io: Io = defaultIo): Promise<number> {
  let exitCode: number = EXIT.compacted;
  // For what prints a result (compact, demo, help, the version); not for the services, whose stdout is their log.
  let output: CommandOutput | undefined;
  const resultOutput = () => (output ??= new CommandOutput(io.stdout, io.stderr));
  const program = new Command("compactd")
    .description("Context compaction for LLM agents")
    .version(packageVersion(), "-V, --version", "print the version")
    .exitOverride()
    .configureOutput({
      writeOut: (s) => resultOutput().write(s),
      writeErr: (s) => io.stderr.write(s),
    });

  program
    .command("compact")
    .description("compact a conversation file or an agent's session log (or every .json and .jsonl file of a directory, or - for stdin) and print the result as JSON")
    .argument("<file>", "a JSON conversation, a Claude Code or pi session log (JSONL), a directory of them, or - for stdin")
    .requiredOption("--context-window <tokens>", "the model's context window in tokens", wholeNumber("--context-window", TOKEN_RANGE))
    .option("--reserve-tokens <tokens>", `room kept free for the next response (default ${DEFAULT_RESERVE_TOKENS})`, wholeNumber("--reserve-tokens", TOKEN_RANGE))
    .option("--keep-recent-tokens <tokens>", `recent tokens kept verbatim (default ${DEFAULT_KEEP_RECENT_TOKENS}, at most a quarter of the usable window)`, wholeNumber("--keep-recent-tokens", TOKEN_RANGE))
    .option("--max-summary-tokens <tokens>", "cap on the summary's length", wholeNumber("--max-summary-tokens", TOKEN_RANGE))
    .option(
      "--stall-timeout-ms <ms>",
      `cancel a summary stream silent for this long (default ${DEFAULT_SUMMARIZATION_STALL_TIMEOUT_MS}, from ${STALL_TIMEOUT_RANGE.least} to ${STALL_TIMEOUT_RANGE.most})`,
      wholeNumber("--stall-timeout-ms", STALL_TIMEOUT_RANGE),
    )
    .addOption(new Option("--reason <reason>", "what asked for the compaction").choices(REASONS).default("manual"))
    .addOption(new Option("--summarizer <name>", "anthropic (needs ANTHROPIC_API_KEY) or offline (no model)").choices(["anthropic", "offline"]))
    .option("--model <model>", "the Anthropic model that writes the summary")
    .addOption(new Option("--format <format>", "input shape").choices(["auto", "anthropic", "openai"]).default("auto"))
    .option("--usage-tokens <tokens>", "the provider's token count for the whole input, to calibrate estimates", wholeNumber("--usage-tokens", TOKEN_RANGE))
    .addHelpText("after", COMPACT_EXIT_CODES)
    .action(async (file: string, opts: Record<string, unknown>) => {
      exitCode = await runCompact(file, toCompactOptions(opts), io, resultOutput());
    });

  program
    .command("demo")
    .description(
      "run the API, a worker and a webhook receiver on a private Redis, compact the bundled session and the shared corpus (or the .json files of [directory]) through the HTTP API, and show what happened",
    )
    .argument("[directory]", "conversation files to submit instead of the shared corpus")
    .action(async (directory: string | undefined) => {
      // Loaded on demand, like the services: `compact` must not load Redis, BullMQ or fastify.
      const { runDemo } = await import("./demoCommand.js");
      exitCode = await runDemo(directory, io, resultOutput());
    });

  const services: [ServiceKind, string][] = [
    ["serve", `run the HTTP API (PORT, default ${DEFAULT_API_PORT})`],
    ["worker", `run a compaction worker (metrics on METRICS_PORT, default ${DEFAULT_METRICS_PORT})`],
    ["dev", "run the API and a worker in one process, for a laptop"],
  ];
  for (const [kind, description] of services) {
    const command = program.command(kind).description(`${description}; configured by the environment (see the README)`);
    if (kind === "dev") command.option("--host <address>", "the address the API listens on", "127.0.0.1");
    command.action(async (opts: { host?: string }) => {
      // Loaded on demand: `compact` must start fast and never load Redis, BullMQ or fastify.
      const { runService } = await import("./serviceCommand.js");
      exitCode = await runService(kind, io, { host: opts.host });
    });
  }

  // Commander's refusals of the command line start "error:"; they read as compactd's own instead, naming the help of the command refused.
  for (const command of [program, ...program.commands]) {
    const help = command === program ? "compactd" : `compactd ${command.name()}`;
    command.configureOutput({ outputError: (text, write) => write(usageLine(text.replace(/^error: /, "").trimEnd(), help)) });
  }

  try {
    await program.parseAsync(argv, { from: "user" });
    return output?.exitCode ?? exitCode;
  } catch (err) {
    // A command stopped because its output could not be written: that is the outcome, whatever it was doing then.
    if (output?.exitCode !== undefined) return output.exitCode;
    if (err instanceof CommanderError) {
      // Help and version are successful exits; everything else is a usage error.
      return err.exitCode === 0 ? EXIT.compacted : EXIT.usage;
    }
    if (err instanceof UsageError) {
      io.stderr.write(usageLine(err.message));
      return EXIT.usage;
    }
    io.stderr.write(`compactd: ${err instanceof Error ? err.message : String(err)}\n`);
    return EXIT.failed;
  }
}

function toCompactOptions(opts: Record<string, unknown>): CompactCommandOptions {
  return {
    contextWindow: opts.contextWindow as number,
    reserveTokens: opts.reserveTokens as number | undefined,
    keepRecentTokens: opts.keepRecentTokens as number | undefined,
    maxSummaryTokens: opts.maxSummaryTokens as number | undefined,
    stallTimeoutMs: opts.stallTimeoutMs as number | undefined,
    reason: opts.reason as Reason,
    summarizer: opts.summarizer as "anthropic" | "offline" | undefined,
    model: opts.model as string | undefined,
    format: opts.format as FormatOption,
    usageTokens: opts.usageTokens as number | undefined,
  };
}

/** What `compact --help` says of its exit codes: a script calling it needs them, and the README is not at hand. */
const COMPACT_EXIT_CODES = [
  "",
  "Exit codes:",
  ...([
    [EXIT.compacted, "compacted: the result on stdout (stderr says when it is degraded, or still too large)"],
    [EXIT.nothingToCompact, 'nothing to compact: {"status":"nothing_to_compact","stillAboveThreshold":false} on stdout (stderr says when it is true)'],
    [EXIT.usage, "bad input or usage: one line on stderr names it"],
    [EXIT.failed, "anything else"],
    [EXIT.readerGone, "the reader of stdout went away (as a tool stopped by SIGPIPE)"],
  ] as const).map(([code, meaning]) => `  ${String(code).padEnd(5)}${meaning}`),
  "A directory exits 2 when any file was bad input, else 0 when any was compacted, else 3.",
].join("\n");

/** A flag's range, with each end in words for the message refusing a value outside it. */
interface Range {
  readonly least: number;
  readonly leastInWords: string;
  readonly most: number;
  readonly mostInWords: string;
}

/** Token counts: the API's range. */
const TOKEN_RANGE: Range = { least: 1, leastInWords: "a token", most: MAX_TOKEN_COUNT, mostInWords: "a hundred million tokens" };

const STALL_TIMEOUT_RANGE: Range = {
  least: MIN_SUMMARIZATION_STALL_TIMEOUT_MS,
  leastInWords: "a second",
  most: MAX_SUMMARIZATION_STALL_TIMEOUT_MS,
  mostInWords: "an hour",
};

/** A flag's value as a whole number within `range`, the same the API takes for the field. */
function wholeNumber(flag: string, range: Range): (value: string) => number {
  return (value) => {
    if (!/^\d+$/.test(value) || Number(value) <= 0) {
      throw new InvalidArgumentError(`${flag} takes a positive whole number, got "${value}"`);
    }
    if (Number(value) < range.least) {
      throw new InvalidArgumentError(`${flag} takes at least ${range.least} (${range.leastInWords}), got "${value}"`);
    }
    if (Number(value) > range.most) {
      throw new InvalidArgumentError(`${flag} takes at most ${range.most} (${range.mostInWords}), got "${value}"`);
    }
    return Number(value);
  };
}

/** This package's version; src/cli and dist/cli both sit two folders below package.json. */
function packageVersion(): string {
  return (createRequire(import.meta.url)("../../package.json") as { version: string }).version;
}
