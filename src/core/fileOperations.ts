/**
 * Which files the summarized history read and modified.
 *
 * A summary in prose loses exact paths first, and paths are what an agent needs
 * to pick up its work again without re-exploring the repository. So paths are
 * collected mechanically from tool calls over the whole summarized range
 * (including messages too old to fit the summarization request), carried over
 * from the previous summary, and appended after the summary in tagged blocks.
 */
import type { Message } from "./message.js";
import { pathLine, pathOfLine } from "./pathLine.js";
import { defuseBlockTags } from "./summaryEnvelope.js";

/** Each list keeps at most this many paths; the least recently touched are evicted first. */
export const MAX_FILE_PATHS = 50;

const READ_OPEN = "<read-files>";
const READ_CLOSE = "</read-files>";
const MODIFIED_OPEN = "<modified-files>";
const MODIFIED_CLOSE = "</modified-files>";

/** Paths in the order they were last touched, oldest first. */
export interface FileOperations {
  readonly read: readonly string[];
  readonly modified: readonly string[];
}

export const NO_FILE_OPERATIONS: FileOperations = { read: [], modified: [] };

/** Argument names that hold a file path in common agent tools. */
const PATH_ARGUMENTS = ["path", "file_path", "filePath", "filename", "file", "notebook_path", "target_file"];

/** Tool names that change files; everything they touch counts as modified. */
export const MODIFYING_TOOL = /write|edit|create|patch|replace|insert|delete|remove|rename|move|apply|save/i;

/** Tool names that read files; search and listing tools are not reads of a file. */
const READING_TOOL = /read|view|open|cat|show|get_?file/i;

/**
 * Merges the file operations of `messages` into `inherited`. A file that was
 * written is only "modified", even if it was also read: the list tells the
 * model which files differ from what it may remember.
 */
export function collectFileOperations(messages: readonly Message[], inherited: FileOperations): FileOperations {
  const read = new Set(inherited.read);
  const modified = new Set(inherited.modified);
  for (const message of messages) {
    for (const block of message.blocks) {
      if (block.type !== "toolCall") continue;
      const isWrite = MODIFYING_TOOL.test(block.name);
      if (!isWrite && !READING_TOOL.test(block.name)) continue;
      for (const path of pathsIn(block.input)) {
        const list = isWrite ? modified : read;
        list.delete(path); // re-insert: most recently touched goes last
        list.add(path);
      }
    }
  }
  for (const path of modified) read.delete(path);
  return { read: newest([...read]), modified: newest([...modified]) };
}

/** The tagged blocks appended after a summary; empty when there are no paths. */
export function formatFileOperations(ops: FileOperations): string {
  const parts: string[] = [];
  // A path is the agent's argument, not compactd's text: one holding a block's tag must not end or open a
  // block, and one holding a line break must stay one line (see pathLine.ts).
  const lines = (paths: readonly string[]): string => paths.map((path) => defuseBlockTags(pathLine(path))).join("\n");
  if (ops.read.length > 0) parts.push(`${READ_OPEN}\n${lines(ops.read)}\n${READ_CLOSE}`);
  if (ops.modified.length > 0) parts.push(`${MODIFIED_OPEN}\n${lines(ops.modified)}\n${MODIFIED_CLOSE}`);
  return parts.join("\n\n");
}

/**
 * Splits a previous summary into its prose and the file operations appended to
 * it, so the prose is updated by the summarizer and the paths are merged here.
 */
export function splitFileOperations(summary: string): { prose: string; files: FileOperations } {
  const read = taggedLines(summary, READ_OPEN, READ_CLOSE);
  const modified = taggedLines(summary, MODIFIED_OPEN, MODIFIED_CLOSE);
  const prose = summary
    .replace(blockPattern(READ_OPEN, READ_CLOSE), "")
    .replace(blockPattern(MODIFIED_OPEN, MODIFIED_CLOSE), "")
    .trimEnd();
  return { prose, files: { read, modified } };
}

/** The file paths a tool call's arguments name. */
export function pathsIn(input: unknown): string[] {
  if (input === null || typeof input !== "object") return [];
  const args = input as Record<string, unknown>;
  const found: string[] = [];
  for (const key of PATH_ARGUMENTS) {
    const value = args[key];
    if (typeof value === "string" && value.trim() !== "") found.push(value.trim());
  }
  if (Array.isArray(args.paths)) {
    for (const p of args.paths) if (typeof p === "string" && p.trim() !== "") found.push(p.trim());
  }
  return found;
}

function newest(paths: string[]): string[] {
  return paths.length > MAX_FILE_PATHS ? paths.slice(paths.length - MAX_FILE_PATHS) : paths;
}

function taggedLines(text: string, open: string, close: string): string[] {
  const match = blockPattern(open, close).exec(text);
  if (match === null) return [];
  return match[1]!
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "")
    .map(pathOfLine);
}

function blockPattern(open: string, close: string): RegExp {
  return new RegExp(`\\n*${open}\\n([\\s\\S]*?)${close}`);
}
