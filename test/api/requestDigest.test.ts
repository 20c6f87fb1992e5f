/**
 * The request digest hashes the request's canonical JSON, with each message
 * list's canonical text written once and digested for the swap contract on
 * the way: the same digests as hashing the whole canonical texts, whatever
 * the messages hold and however long they are.
 */
import { createHash } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it, vi } from "vitest";
import { CanonicalMessages } from "../../src/api/requestDigest.js";
import { canonicalJson, replacesOf } from "../../src/core/replaces.js";

const sha = (text: string): string => createHash("sha256").update(text, "utf8").digest("hex");

/** JSON values, NUL and the characters JSON escapes included, in keys as in strings. */
const json = fc.jsonValue({ maxDepth: 4 }).map((value) => JSON.parse(JSON.stringify(value)) as unknown);
const messageList = fc.array(fc.oneof(json, fc.record({ role: fc.constant("user"), content: fc.string({ unit: "binary" }) })), { maxLength: 6 });

describe("the request digest", () => {
  it("is SHA-256 of the whole request's canonical JSON, for a single request and for a batch", () => {
    fc.assert(
      fc.property(messageList, fc.array(messageList, { minLength: 1, maxLength: 4 }), json, (messages, itemLists, extra) => {
        const single = { messages, contextWindow: 200_000, metadata: extra, "k\u0000ey": "\u0000" };
        const canonical = new CanonicalMessages();
        expect(canonical.requestDigest(single, [single.messages])).toBe(sha(canonicalJson(single)));
        expect(replacesOf(messages, { digest: canonical.digestOf(messages) })).toEqual(replacesOf(messages));
        expect(canonical.digestOf(messages)).toBe(sha(canonicalJson(messages)));

        const batch = { items: itemLists.map((list) => ({ messages: list, contextWindow: 100_000 })), metadata: extra };
        const lists = batch.items.map((item) => item.messages);
        const forBatch = new CanonicalMessages();
        expect(forBatch.requestDigest(batch, lists)).toBe(sha(canonicalJson(batch)));
        for (const list of lists) expect(forBatch.digestOf(list)).toBe(sha(canonicalJson(list)));
      }),
      { numRuns: 300 },
    );
  });

  it("digests a conversation longer than one piece the same as its whole text", () => {
    // Strings past the piece size, and characters UTF-8 writes in two, three and four bytes, across the pieces' seams.
    const messages = Array.from({ length: 40 }, (_, i) => ({ role: i % 2 === 0 ? "user" : "assistant", content: `é→😀 ${i} `.repeat(900 + i) }));
    const request = { messages, contextWindow: 200_000 };
    const canonical = new CanonicalMessages();
    expect(canonicalJson(messages).length).toBeGreaterThan(4 * 32 * 1024);
    expect(canonical.requestDigest(request, [messages])).toBe(sha(canonicalJson(request)));
    expect(canonical.digestOf(messages)).toBe(sha(canonicalJson(messages)));
    expect(replacesOf(messages)).toEqual({ count: 40, digest: sha(canonicalJson(messages)) });
  });

  it("writes each message list out once: the swap digest is the one taken with the request digest", () => {
    const messages = [{ role: "user", content: "hello \u0000 world" }];
    const canonical = new CanonicalMessages();
    canonical.requestDigest({ messages }, [messages]);
    // canonicalJson writes every key and every primitive value with JSON.stringify: no call, no walk.
    const stringify = vi.spyOn(JSON, "stringify");
    let digest;
    try {
      digest = canonical.digestOf(messages);
      expect(stringify).not.toHaveBeenCalled();
    } finally {
      stringify.mockRestore();
    }
    expect(digest).toBe(sha(canonicalJson(messages)));
  });
});
