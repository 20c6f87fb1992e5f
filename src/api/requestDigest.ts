/**
 * What an Idempotency-Key is bound to (the whole validated request, whatever
 * its key order), and the canonical JSON it shares with each job's
 * exact-swap digest.
 *
 * Both hash canonical JSON of the messages, which are nearly all of a
 * request: written once, the text serves both. The client sends an
 * Idempotency-Key with every submission, so without the sharing every
 * submission would write its conversation out twice.
 */
import { createHash } from "node:crypto";
import { canonicalJson } from "../core/replaces.js";

export class CanonicalMessages {
  private readonly written = new Map<object, string>();

  /** The canonical JSON of `messages`, written on first use only. */
  of(messages: readonly unknown[]): string {
    let text = this.written.get(messages);
    if (text === undefined) {
      text = canonicalJson(messages);
      this.written.set(messages, text);
    }
    return text;
  }

  /**
   * SHA-256 of the request's canonical JSON, reusing (and keeping for the
   * jobs' `replaces`) the canonical text of each of `messages`, the request's
   * message arrays.
   */
  requestDigest(request: unknown, messages: readonly (readonly unknown[])[]): string {
    for (const list of messages) this.of(list);
    return createHash("sha256").update(canonicalJson(request, this.written)).digest("hex");
  }
}
