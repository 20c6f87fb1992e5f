/**
 * The bytes of an input file (or stdin) as the JSON value they hold, or a
 * UsageError saying, in terms a person can act on, why they are not one.
 *
 * Files come from editors, shells and other tools, not only from
 * `JSON.stringify`:
 * - a UTF-8 byte order mark (Windows editors, PowerShell) is taken off, as
 *   RFC 8259 lets a parser do, instead of being refused as a stray character;
 * - bytes that are not UTF-8 (a Latin-1 export, UTF-16 from PowerShell's `>`)
 *   are refused with where they are: decoded leniently, they would become
 *   U+FFFD, and the messages kept verbatim would come back changed;
 * - a syntax error names its line and column (Node 20 says only "position
 *   N", useless in a pretty-printed file);
 * - JSON Lines (a Claude Code or pi session log, one event per line) is
 *   named as such, rather than failing at the second line's first character.
 */
import { isUtf8 } from "node:buffer";
import { END_OF_INPUT, findJsonSyntaxError } from "./jsonSyntaxError.js";
import { UsageError } from "./usageError.js";

const UTF8_BOM = [0xef, 0xbb, 0xbf];

/** Reads the input `name` (a path, or stdin) with `read` and parses it; a read that fails is a UsageError naming its code. */
export async function readJsonInput(name: string, read: () => Promise<Buffer>): Promise<unknown> {
  let bytes: Buffer;
  try {
    bytes = await read();
  } catch (err) {
    throw new UsageError(`${name}: cannot read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  return parseJsonInput(name, bytes);
}

function parseJsonInput(name: string, bytes: Buffer): unknown {
  const text = decodeUtf8(name, bytes);
  if (text.trim() === "") throw new UsageError(`${name}: is empty; expected a conversation as JSON: {"messages": […]} or a message array`);
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new UsageError(`${name}: ${whyNotJson(text, (err as Error).message)}`);
  }
}

function decodeUtf8(name: string, bytes: Buffer): string {
  if ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff)) {
    throw new UsageError(`${name}: is UTF-16 text (it opens with a UTF-16 byte order mark); save it as UTF-8`);
  }
  if (!isUtf8(bytes)) {
    const offset = firstInvalidUtf8(bytes);
    const line = bytes.subarray(0, offset).filter((b) => b === 0x0a).length + 1;
    throw new UsageError(
      `${name}: is not UTF-8 text: byte 0x${bytes[offset]!.toString(16).toUpperCase().padStart(2, "0")} at offset ${offset} (line ${line}) does not decode; save it as UTF-8`,
    );
  }
  const bom = UTF8_BOM.every((b, i) => bytes[i] === b) ? UTF8_BOM.length : 0;
  return bytes.toString("utf8", bom);
}

/** Offset of the first byte that does not start a well-formed UTF-8 sequence (overlong forms and surrogates included, by isUtf8). */
function firstInvalidUtf8(bytes: Buffer): number {
  let i = 0;
  while (i < bytes.length) {
    const lead = bytes[i]!;
    const length = lead < 0x80 ? 1 : lead >= 0xc2 && lead <= 0xdf ? 2 : lead >= 0xe0 && lead <= 0xef ? 3 : lead >= 0xf0 && lead <= 0xf4 ? 4 : 0;
    if (length === 0 || !isUtf8(bytes.subarray(i, i + length))) return i;
    i += length;
  }
  return i;
}

/** Why a text `JSON.parse` refused is not JSON, in one line. */
function whyNotJson(text: string, parserMessage: string): string {
  const error = findJsonSyntaxError(text);
  // The scanner and V8 agree on the grammar; should they ever not, V8's word stands, on one line.
  if (error === undefined) return `not valid JSON (${parserMessage.replace(/\s+/g, " ")})`;
  const before = text.slice(0, error.offset);
  if (error.expected === END_OF_INPUT && before.slice(before.trimEnd().length).includes("\n")) {
    return 'holds one JSON value per line (JSON Lines, as a Claude Code or pi session log does); compactd takes one conversation as JSON: {"system"?, "messages": […]} or a message array';
  }
  const line = before.split("\n").length;
  const column = error.offset - before.lastIndexOf("\n");
  const at = text.codePointAt(error.offset);
  const found = at === undefined ? END_OF_INPUT : JSON.stringify(String.fromCodePoint(at));
  return `not valid JSON at line ${line}, column ${column}: expected ${error.expected}, found ${found}`;
}
