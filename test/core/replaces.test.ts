import { createHash } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalDigest, canonicalJson, replacesOf, writeCanonicalJson } from "../../src/core/replaces.js";

describe("replacesOf", () => {
  it("counts every message of the request and hashes their canonical JSON", () => {
    const messages = [
      { role: "user", content: "fix the build" },
      { role: "assistant", content: [{ type: "text", text: "on it" }] },
    ];
    const expected = createHash("sha256")
      .update('[{"content":"fix the build","role":"user"},{"content":[{"text":"on it","type":"text"}],"role":"assistant"}]')
      .digest("hex");
    expect(replacesOf(messages)).toEqual({ count: 2, digest: expected });
  });

  it("gives the same digest whatever order the keys were written in", () => {
    const a = [{ role: "user", content: [{ type: "text", text: "hi", cache_control: { type: "ephemeral" } }] }];
    const b = [{ content: [{ cache_control: { type: "ephemeral" }, text: "hi", type: "text" }], role: "user" }];
    expect(replacesOf(a).digest).toBe(replacesOf(b).digest);
  });

  it("changes the digest when any earlier message is edited", () => {
    const before = [
      { role: "user", content: "one" },
      { role: "assistant", content: "two" },
    ];
    const edited = [
      { role: "user", content: "one!" },
      { role: "assistant", content: "two" },
    ];
    expect(replacesOf(before).digest).not.toBe(replacesOf(edited).digest);
  });

  it("lets an agent that kept appending find the replaced prefix by hashing its first count messages", () => {
    const sent = [
      { role: "user", content: "a" },
      { role: "assistant", content: "b" },
    ];
    const contract = replacesOf(sent);
    const meanwhile = [...sent, { role: "user", content: "c" }];
    expect(replacesOf(meanwhile.slice(0, contract.count)).digest).toBe(contract.digest);
  });
});

describe("canonicalJson", () => {
  it("sorts keys by UTF-16 code units and writes no whitespace", () => {
    expect(canonicalJson({ b: 1, a: [true, null], "é": "x", B: { d: 2, c: 1 } })).toBe(
      '{"B":{"c":1,"d":2},"a":[true,null],"b":1,"é":"x"}',
    );
  });

  it("escapes strings and writes numbers exactly as JSON.stringify does", () => {
    expect(canonicalJson(["line\nbreak \"quoted\" \u2028", 1e21, 0.1, -0])).toBe(
      JSON.stringify(["line\nbreak \"quoted\" \u2028", 1e21, 0.1, -0]),
    );
  });

  it("parses back to the same value for any JSON input", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(JSON.parse(canonicalJson(value))).toEqual(JSON.parse(JSON.stringify(value)));
      }),
    );
  });

  it("is independent of key insertion order for any JSON object", () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), (value) => {
        const reversed = Object.fromEntries(Object.entries(value).reverse());
        expect(canonicalJson(reversed)).toBe(canonicalJson(value));
      }),
    );
  });

  it("writes what toJSON gives, as JSON.stringify sends it: a Date as its ISO text", () => {
    const at = new Date("2026-12-04T10:00:00.000Z");
    const value = { at, list: [at], money: { toJSON: (key: string) => `12.50 EUR at ${key}` } };
    expect(canonicalJson(value)).toBe(canonicalJson(JSON.parse(JSON.stringify(value))));
    expect(canonicalJson(at)).toBe('"2026-12-04T10:00:00.000Z"');
  });

  it("drops and nulls what JSON cannot carry as JSON.stringify does, and writes empty containers", () => {
    const value = { b: [1, undefined, () => 1, Symbol("s")], a: { z: undefined, f: () => 1 }, c: [], d: {} };
    expect(canonicalJson(value)).toBe('{"a":{},"b":[1,null,null,null],"c":[],"d":{}}');
  });

  it("orders integer-like keys as strings, not in the engine's numeric order", () => {
    expect(canonicalJson({ 2: "two", 10: "ten", b: "b" })).toBe('{"10":"ten","2":"two","b":"b"}');
  });

  it("copies in the JSON already written for a member, by identity", () => {
    const messages = [{ role: "user", content: "hi" }];
    expect(canonicalJson({ messages, n: 1 }, new Map([[messages, "WRITTEN"]]))).toBe('{"messages":WRITTEN,"n":1}');
  });

  it("writes nesting far deeper than the call stack allows", () => {
    let value: unknown = "core";
    for (let i = 0; i < 200_000; i++) value = i % 2 === 0 ? [value] : { v: value };
    const text = canonicalJson(value);
    expect(text.length).toBe(2 * 200_000 + 100_000 * 4 + '"core"'.length);
    expect(text.startsWith('{"v":[{"v":[')).toBe(true);
  });
});

describe("writeCanonicalJson", () => {
  // A conversation of about 300 KB: 120 messages of 2,000-2,600 characters, some outside Latin-1.
  const conversation = Array.from({ length: 120 }, (_, i) => ({ role: i % 2 === 0 ? "user" : "assistant", content: `${i} ünïcode → ✓ `.repeat(100 + (i % 30)) }));

  it("hands the text on in pieces that stay under V8's large-object size, whose concatenation is canonicalJson", () => {
    const pieces: string[] = [];
    writeCanonicalJson(conversation, (piece) => pieces.push(piece));
    expect(pieces.join("")).toBe(canonicalJson(conversation));
    expect(pieces.length).toBeGreaterThan(5);
    // A piece is flushed once it reaches 32 Ki units, so it ends at most one value past that.
    const longestValue = Math.max(...conversation.map((m) => JSON.stringify(m.content).length));
    for (const piece of pieces) expect(piece.length).toBeLessThan(32 * 1024 + longestValue + 64);
  });

  it("gives canonicalDigest the digest of the whole text", () => {
    expect(canonicalDigest(conversation)).toBe(createHash("sha256").update(canonicalJson(conversation)).digest("hex"));
    expect(replacesOf(conversation).digest).toBe(canonicalDigest(conversation));
  });
});

/** A message whose one block refers back to the message: a cycle, as an agent's own objects can hold one. */
function selfReferringMessage(): { role: string; content: unknown[] } {
  const message: { role: string; content: unknown[] } = { role: "user", content: [] };
  message.content.push({ type: "text", text: "see above", parent: message });
  return message;
}

/** `levels` levels of `{"v": [ … ]}` around `core`. */
function nestedAround(core: unknown, levels: number): unknown {
  let value = core;
  for (let i = 0; i < levels; i++) value = i % 2 === 0 ? [value] : { v: value };
  return value;
}

describe("values JSON cannot carry", () => {
  it("refuses a message that refers to itself, naming where the cycle closes, instead of writing it forever", () => {
    expect(() => replacesOf([selfReferringMessage()])).toThrow(
      new TypeError("messages[0].content[0].parent: refers to messages[0], which encloses it: a cycle, which JSON cannot carry"),
    );
    const root: Record<string, unknown> = { role: "user" };
    root.self = root;
    expect(() => canonicalJson(root)).toThrow(new TypeError("self: refers to the whole value, which encloses it: a cycle, which JSON cannot carry"));
  });

  it("finds a cycle that closes below nesting deeper than any request", () => {
    const inner: Record<string, unknown> = { text: "bottom" };
    inner.again = inner;
    expect(() => canonicalJson(nestedAround(inner, 1_000))).toThrow(/^v\[0\](\.v\[0\]){499}\.again: refers to v\[0\](\.v\[0\]){499}, which encloses it: a cycle/);
  });

  it("writes a value that two members share, however deep, since that is no cycle", () => {
    const shared = { text: "twice", list: [1, { n: 2 }] };
    const value = nestedAround([shared, { again: shared }], 1_000);
    const text = '{"list":[1,{"n":2}],"text":"twice"}';
    expect(canonicalJson(value)).toContain(`[${text},{"again":${text}}]`);
  });

  it("names a BigInt, which JSON.stringify refuses without saying where", () => {
    const messages = [{ role: "user", content: [{ type: "text", text: "x", tokens: 12n }] }];
    expect(() => replacesOf(messages)).toThrow(
      new TypeError("messages[0].content[0].tokens: is a BigInt, which JSON cannot carry; send it as a number or a string"),
    );
  });
});
