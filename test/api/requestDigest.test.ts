/**
 * The request digest hashes the request's canonical JSON, with each message
 * list's canonical bytes written once and shared with the swap contract: the
 * same digest as hashing the whole canonical text, whatever the messages hold.
 */
import { createHash } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
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
        expect(replacesOf(messages, canonical.of(messages))).toEqual(replacesOf(messages));

        const batch = { items: itemLists.map((list) => ({ messages: list, contextWindow: 100_000 })), metadata: extra };
        const lists = batch.items.map((item) => item.messages);
        const forBatch = new CanonicalMessages();
        expect(forBatch.requestDigest(batch, lists)).toBe(sha(canonicalJson(batch)));
        for (const list of lists) expect(replacesOf(list, forBatch.of(list))).toEqual(replacesOf(list));
      }),
      { numRuns: 300 },
    );
  });

  it("writes each message list out once", () => {
    const messages = [{ role: "user", content: "hello \u0000 world" }];
    const canonical = new CanonicalMessages();
    const first = canonical.of(messages);
    canonical.requestDigest({ messages }, [messages]);
    expect(canonical.of(messages)).toBe(first);
  });
});
