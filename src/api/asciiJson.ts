/**
 * A request body's JSON as the API parses and stores it: with a leading
 * byte-order mark dropped, and, when the body is mostly ASCII, every
 * character outside ASCII written as a JSON `\u` escape.
 *
 * Why ASCII: V8 decodes UTF-8 on a slow path from the first byte outside
 * ASCII on, into a string of two bytes a character, which for a 100 KB body
 * is an object of its own that the kernel maps and faults in afresh for
 * every request; `JSON.parse` then scans two-byte text. An agent's
 * conversation is nearly all ASCII (1.6% of the corpus's request bytes are
 * not) but nearly never all of it, so nearly every body took that path
 * twice: in the API, and in the worker, which parses the same bytes again
 * from the stored payload. In ASCII, both decode with a copy into a string
 * of one byte a character, and the parser scans that: on the bench's
 * 100 KB conversations, rewriting and parsing took the API 0.28 ms where
 * parsing alone took 1.0, and the worker parsed in 0.15 ms (docs/BENCHMARKS.md,
 * Service).
 *
 * Why only mostly: an escape is six bytes (twelve for a character beyond the
 * Basic Multilingual Plane, written as its surrogate pair), where UTF-8
 * takes two to four, and each run of them is written and parsed on its own.
 * A body in Chinese is mostly characters of three bytes; rewritten it is
 * twice the size and slower to parse, so a body with more than
 * {@link MAX_ESCAPED_SHARE} of its bytes outside ASCII is kept as it came.
 * With accents put into the corpus's conversations, rewriting still took
 * the two processes less than half the parsing time at 2% of the bytes
 * (0.55 ms against 2.0), a third less at 6%, and more at 8%. A run costs
 * more the larger the body (the rewritten text is built of one piece per
 * run), so a body over {@link MAX_REWRITTEN_BYTES}, which an intake thread
 * takes in anyway, is kept as it came: a 20 MB text with an accent every 32
 * bytes took 440 ms to rewrite, where parsing it took 150.
 *
 * The value is the same: outside ASCII, valid UTF-8 can only stand inside a
 * JSON string, where an escape means the very character it replaces. (A
 * body that is not JSON stays not JSON.)
 *
 * Why a body that is not UTF-8 is refused: JSON is exchanged in UTF-8 (RFC
 * 8259, section 8.1), and decoding anything else as UTF-8 puts U+FFFD where
 * the sender's characters were, so the conversation compacted, and the
 * summary written of it, would not be the one sent. A client that sends
 * Latin-1 learns it from a 400 saying at which byte, not from a summary
 * with its names garbled.
 *
 * Why the mark goes: the parser skips a leading byte-order mark, and the
 * worker's parse of the stored bytes, which does not, failed the job as
 * undecodable after the API had accepted it.
 */
import { isAscii, isUtf8 } from "node:buffer";
import { ErrorCodes } from "../client/errorCodes.js";
import { firstInvalidUtf8, utf8ByteOrderMarkLength } from "../core/utf8Bytes.js";
import { ApiError } from "./apiError.js";

/** The share of a body's bytes outside ASCII up to which it is rewritten (see above). */
const MAX_ESCAPED_SHARE = 1 / 16;

/** The largest body rewritten (see above). */
const MAX_REWRITTEN_BYTES = 4 * 1024 * 1024;

/** Runs of bytes outside ASCII in a body read as Latin-1, one character a byte. */
const OUTSIDE_ASCII = /[\x80-\xff]+/g;

/** Thrown out of the rewriting when a body turns out to hold too much outside ASCII. */
const TOO_MUCH = Symbol("too much outside ASCII");

/**
 * `bytes` as the API parses and stores them (see above): as ASCII text, one
 * character a byte, when they are ASCII, or mostly ASCII and at most
 * {@link MAX_REWRITTEN_BYTES}; otherwise the bytes, without a leading
 * byte-order mark. Throws a 400 when they are not UTF-8.
 */
export function takenJson(bytes: Buffer): string | Buffer {
  const markLength = utf8ByteOrderMarkLength(bytes);
  const body = markLength === 0 ? bytes : bytes.subarray(markLength);
  if (isAscii(body)) return body.toString("latin1");
  if (!isUtf8(body)) {
    const at = markLength + firstInvalidUtf8(body);
    throw new ApiError(400, ErrorCodes.invalidJson, `the body is not valid UTF-8 at byte ${at}; send JSON in UTF-8`);
  }
  if (body.length > MAX_REWRITTEN_BYTES) return body;
  let budget = Math.floor(body.length * MAX_ESCAPED_SHARE);
  try {
    return body.toString("latin1").replace(OUTSIDE_ASCII, (run) => {
      budget -= run.length;
      if (budget < 0) throw TOO_MUCH;
      return escapedUtf8(run);
    });
  } catch (err) {
    if (err === TOO_MUCH) return body;
    throw err;
  }
}

/** The bytes of JSON as takenJson gives it: ASCII text is one byte a character. */
export function jsonBytes(json: string | Buffer): Buffer {
  return typeof json === "string" ? Buffer.from(json, "latin1") : json;
}

/**
 * JSON escapes for `run`, UTF-8 bytes read as Latin-1 characters. The body
 * is valid UTF-8 and the run is bounded by ASCII, so it holds whole
 * sequences: a lead byte, then one to three continuation bytes.
 */
function escapedUtf8(run: string): string {
  let escaped = "";
  for (let i = 0; i < run.length; ) {
    const lead = run.charCodeAt(i);
    const length = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : 2;
    let codePoint = lead & (0x7f >> length);
    for (let k = 1; k < length; k++) codePoint = (codePoint << 6) | (run.charCodeAt(i + k) & 0x3f);
    i += length;
    if (codePoint < 0x10000) {
      escaped += escape(codePoint);
    } else {
      const offset = codePoint - 0x10000;
      escaped += escape(0xd800 | (offset >> 10)) + escape(0xdc00 | (offset & 0x3ff));
    }
  }
  return escaped;
}

function escape(unit: number): string {
  return `\\u${unit.toString(16).padStart(4, "0")}`;
}
