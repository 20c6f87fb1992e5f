/**
 * The bytes of an input file (or stdin) as the conversation they hold, or a
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
 * - JSON Lines (one event per line) is read as an agent's session log when
 *   its content is one compactd knows (Claude Code's or pi's, converted as
 *   sessionLogs.ts says), and otherwise named as JSON Lines, rather than
 *   failing at the second line's first character.
 */
import { isUtf8 } from "node:buffer";
import { firstInvalidUtf8, utf8ByteOrderMarkLength } from "../core/utf8Bytes.js";
import { describeJsonSyntaxError, END_OF_INPUT, findJsonSyntaxError, type JsonSyntaxError } from "./jsonSyntaxError.js";
import { readSessionLog, type SessionLogFormat } from "./sessionLogs.js";
import { UsageError } from "./usageError.js";

export interface ConversationInput {
  /** What `parseConversation` takes. */
  readonly input: unknown;
  /** The agent whose session log the input was converted from; undefined for a conversation given as JSON. */
  readonly sessionLog?: SessionLogFormat;
}

/** Reads the input `name` (a path, or stdin) with `read` and parses it; a read that fails is a UsageError naming its code. */
export async function readConversationInput(name: string, read: () => Promise<Buffer>): Promise<ConversationInput> {
  let bytes: Buffer;
  try {
    bytes = await read();
  } catch (err) {
    throw new UsageError(`${name}: cannot read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  return parseJsonInput(name, bytes);
}

function parseJsonInput(name: string, bytes: Buffer): ConversationInput {
  const text = decodeUtf8(name, bytes);
  if (text.trim() === "") {
    throw new UsageError(`${name}: is empty; expected a conversation as JSON: {"messages": […]} or a message array, or a Claude Code or pi session log`);
  }
  try {
    return { input: JSON.parse(text) };
  } catch (err) {
    const error = findJsonSyntaxError(text);
    if (error !== undefined && isJsonLines(text, error)) {
      const { format, conversation } = readSessionLog(name, text);
      return { input: conversation, sessionLog: format };
    }
    // The scanner and V8 agree on the grammar; should they ever not, V8's word stands, on one line.
    const why = error === undefined ? `not valid JSON (${(err as Error).message.replace(/\s+/g, " ")})` : `not valid JSON at ${describeJsonSyntaxError(text, error)}`;
    throw new UsageError(`${name}: ${why}`);
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
  return bytes.toString("utf8", utf8ByteOrderMarkLength(bytes));
}

/** Whether the text is one JSON value per line: the first value ends, and the next begins, on a line of its own. */
function isJsonLines(text: string, error: JsonSyntaxError): boolean {
  const before = text.slice(0, error.offset);
  return error.expected === END_OF_INPUT && before.slice(before.trimEnd().length).includes("\n");
}
