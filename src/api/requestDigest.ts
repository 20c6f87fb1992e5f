/**
 * What an Idempotency-Key is bound to (the whole validated request, whatever
 * its key order), and each message list's exact-swap digest, taken in the
 * same pass.
 *
 * Both hash canonical JSON of the messages, which are nearly all of a
 * request: written once, the text feeds both hashes. The client sends an
 * Idempotency-Key with every submission, so without the sharing every
 * submission would write its conversation out twice. The text goes to the
 * hashes in pieces as it is written and is never one string or one buffer:
 * a 100 KB conversation's canonical JSON is a large object to V8, which it
 * maps from the kernel and faults in afresh for every request.
 */
import { createHash } from "node:crypto";
import { canonicalDigest, canonicalJson } from "../core/replaces.js";

/** Stands where a message list goes in the request's canonical JSON: JSON escapes NUL, so canonical JSON never holds one. */
const MARK = "\u0000";
const MARKS = /\u0000(\d+)\u0000/;

export class CanonicalMessages {
  private readonly digests = new Map<object, string>();

  /** SHA-256 (hex) of the canonical JSON of `messages`: the one taken with the request digest, or taken now. */
  digestOf(messages: readonly unknown[]): string {
    let digest = this.digests.get(messages);
    if (digest === undefined) {
      digest = canonicalDigest(messages);
      this.digests.set(messages, digest);
    }
    return digest;
  }

  /**
   * SHA-256 of the request's canonical JSON, taking (and keeping for the
   * jobs' `replaces`) the digest of each of `messages`, the request's
   * message arrays, as their text goes by.
   */
  requestDigest(request: unknown, messages: readonly (readonly unknown[])[]): string {
    const marks = new Map<object, string>(messages.map((list, i) => [list, `${MARK}${i}${MARK}`]));
    // The rest of the request, with a numbered mark where each list goes: split on them, the parts alternate with list numbers.
    const parts = canonicalJson(request, marks).split(MARKS);
    const hash = createHash("sha256");
    parts.forEach((part, i) => {
      if (i % 2 === 0) {
        hash.update(part, "utf8");
      } else {
        const list = messages[Number(part)]!;
        this.digests.set(list, canonicalDigest(list, { alsoInto: hash }));
      }
    });
    return hash.digest("hex");
  }
}
