/**
 * A small Dockerfile reader for tests: enough of the format to ask what each
 * stage does (instructions, continuation lines, comments, parser directives,
 * exec-form JSON arguments), not a builder. No Docker engine runs here, so
 * the Dockerfile's conventions are checked by reading it.
 */

export interface Instruction {
  /** Upper-cased keyword: FROM, RUN, COPY, … */
  readonly keyword: string;
  /** Everything after the keyword, continuation lines joined with a space. */
  readonly args: string;
  /** 1-based line where the instruction starts, for messages. */
  readonly line: number;
}

export interface Stage {
  readonly image: string;
  /** The `AS name`, if any. */
  readonly name: string | undefined;
  readonly index: number;
  /** Instructions after FROM up to the next FROM. */
  readonly instructions: readonly Instruction[];
}

export interface Dockerfile {
  /** Instructions before the first FROM (global ARGs). */
  readonly preamble: readonly Instruction[];
  readonly stages: readonly Stage[];
}

/** Joins continuation lines (a trailing backslash) and drops comments and blank lines. */
function instructions(text: string): Instruction[] {
  const result: Instruction[] = [];
  let pending: { parts: string[]; line: number } | undefined;
  text.split(/\r?\n/).forEach((raw, index) => {
    const trimmed = raw.trim();
    // Comments (parser directives like `# syntax=` included) and blank lines
    // carry no instruction, also inside a continued one, as Docker reads them.
    if (trimmed === "" || trimmed.startsWith("#")) return;
    const continues = trimmed.endsWith("\\");
    const part = continues ? trimmed.slice(0, -1).trim() : trimmed;
    pending ??= { parts: [], line: index + 1 };
    pending.parts.push(part);
    if (continues) return;
    const joined = pending.parts.join(" ");
    const match = /^(\S+)\s*(.*)$/.exec(joined);
    if (match === null) throw new Error(`line ${pending.line}: cannot read "${joined}"`);
    result.push({ keyword: match[1]!.toUpperCase(), args: match[2]!, line: pending.line });
    pending = undefined;
  });
  if (pending !== undefined) throw new Error(`line ${pending.line}: continuation runs past the end of the file`);
  return result;
}

export function parseDockerfile(text: string): Dockerfile {
  const preamble: Instruction[] = [];
  const stages: { image: string; name: string | undefined; index: number; instructions: Instruction[] }[] = [];
  for (const instruction of instructions(text)) {
    if (instruction.keyword === "FROM") {
      const words = instruction.args.split(/\s+/).filter((word) => !word.startsWith("--"));
      const [image, as, name] = words;
      if (image === undefined) throw new Error(`line ${instruction.line}: FROM without an image`);
      if (as !== undefined && (as.toUpperCase() !== "AS" || name === undefined)) {
        throw new Error(`line ${instruction.line}: expected "FROM image [AS name]"`);
      }
      stages.push({ image, name, index: stages.length, instructions: [] });
    } else if (stages.length === 0) {
      preamble.push(instruction);
    } else {
      stages.at(-1)!.instructions.push(instruction);
    }
  }
  return { preamble, stages };
}

/**
 * The arguments of an exec-form instruction (`["node", "x.js"]`), or
 * undefined for shell form, which Docker runs under `/bin/sh -c`.
 */
export function execForm(args: string): string[] | undefined {
  if (!args.trimStart().startsWith("[")) return undefined;
  const parsed: unknown = JSON.parse(args);
  if (!Array.isArray(parsed) || !parsed.every((item) => typeof item === "string")) {
    throw new Error(`exec form must be a JSON array of strings: ${args}`);
  }
  return parsed;
}

/** `KEY=value` pairs of an ENV instruction (the legacy `ENV KEY value` form too). */
export function envOf(args: string): Record<string, string> {
  const pairs = [...args.matchAll(/([A-Za-z_][A-Za-z0-9_]*)=("(?:[^"\\]|\\.)*"|\S*)/g)];
  if (pairs.length === 0) {
    const [key, ...rest] = args.split(/\s+/);
    return key === undefined ? {} : { [key]: rest.join(" ") };
  }
  return Object.fromEntries(pairs.map(([, key, value]) => [key!, value!.replace(/^"(.*)"$/, "$1")]));
}

/** The flags (`--from=deps`) and the sources and destination of a COPY. */
export function copyOf(args: string): { from: string | undefined; sources: string[]; destination: string } {
  const words = execForm(args) ?? args.split(/\s+/);
  const flags = words.filter((word) => word.startsWith("--"));
  const paths = words.filter((word) => !word.startsWith("--"));
  const from = flags.map((flag) => /^--from=(.+)$/.exec(flag)?.[1]).find((value) => value !== undefined);
  if (paths.length < 2) throw new Error(`COPY needs a source and a destination: ${args}`);
  return { from, sources: paths.slice(0, -1), destination: paths.at(-1)! };
}
