/**
 * The two questions about raw bytes that both doors of the service ask of
 * JSON before parsing it, the API of a request body and the CLI of a file:
 * does it open with a UTF-8 byte order mark (which the JSON parser skips but
 * a later parse of the stored bytes would not), and where does it stop being
 * UTF-8 (so a refusal names the byte, instead of a summary carrying U+FFFD
 * where the user's text was).
 */
import { isUtf8 } from "node:buffer";

const UTF8_BYTE_ORDER_MARK = [0xef, 0xbb, 0xbf] as const;

/** How many bytes of `bytes` a leading UTF-8 byte order mark takes: 3 or 0. */
export function utf8ByteOrderMarkLength(bytes: Uint8Array): number {
  return UTF8_BYTE_ORDER_MARK.every((byte, i) => bytes[i] === byte) ? UTF8_BYTE_ORDER_MARK.length : 0;
}

/**
 * Offset of the first byte that does not start a well-formed UTF-8 sequence
 * (overlong forms and surrogates included, as `isUtf8` judges them), or the
 * length when there is none. Walks every sequence: for bytes already known
 * to be broken.
 */
export function firstInvalidUtf8(bytes: Uint8Array): number {
  let i = 0;
  while (i < bytes.length) {
    const lead = bytes[i]!;
    const length = lead < 0x80 ? 1 : lead >= 0xc2 && lead <= 0xdf ? 2 : lead >= 0xe0 && lead <= 0xef ? 3 : lead >= 0xf0 && lead <= 0xf4 ? 4 : 0;
    if (length === 0 || !isUtf8(bytes.subarray(i, i + length))) return i;
    i += length;
  }
  return i;
}
