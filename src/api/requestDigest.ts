/**
 * What an Idempotency-Key is bound to (the whole validated request, whatever
 * its key order), and the canonical JSON it shares with each job's
 * exact-swap digest.
 *
 * Both hash canonical JSON of the messages, which are nearly all of a
 * request: written once, as UTF-8 bytes, the text serves both. The client
 * sends an Idempotency-Key with every submission, so without the sharing
 * every submission would write its conversation out twice. The request
 * digest hashes the rest of the request around those bytes rather than a
 * second copy of the whole text: a 100 KB request's two digests took 2.3 ms
 * written out twice and hashed as strings, 1.5 ms this way.
 */
import { createHash } from "node:crypto";
import { canonicalJson } from "../core/replaces.js";

/** Stands where a message list goes in the request's canonical JSON: JSON escapes NUL, so canonical JSON never holds one. */
const MARK = "\u0000";
const MARKS = /\u0000(\d+)\u0000/;

export class CanonicalMessages {
  private readonly written = new Map<object, Buffer>();

  /** The canonical JSON of `messages` as UTF-8 bytes, written on first use only. */
  of(messages: readonly unknown[]): Buffer {
    let bytes = this.written.get(messages);
    if (bytes === undefined) {
      bytes = Buffer.from(canonicalJson(messages), "utf8");
      this.written.set(messages, bytes);
    }
    return bytes;
  }

  /**
   * SHA-256 of the request's canonical JSON, reusing (and keeping for the
   * jobs' `replaces`) the canonical bytes of each of `messages`, the
   * request's message arrays.
   */
  requestDigest(request: unknown, messages: readonly (readonly unknown[])[]): string {
    const marks = new Map<object, string>(messages.map((list, i) => [list, `${MARK}${i}${MARK}`]));
    // The rest of the request, with a numbered mark where each list goes: split on them, the parts alternate with list numbers.
    const parts = canonicalJson(request, marks).split(MARKS);
    const hash = createHash("sha256");
    parts.forEach((part, i) => {
      if (i % 2 === 0) hash.update(part, "utf8");
      else hash.update(this.of(messages[Number(part)]!));
    });
    return hash.digest("hex");
  }
}
