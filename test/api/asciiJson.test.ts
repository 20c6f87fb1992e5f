/**
 * takenJson: the JSON the API parses and stores is the body's own value,
 * written in ASCII when the body is mostly ASCII, and kept as it came
 * otherwise; a leading byte-order mark never survives.
 */
import { isAscii } from "node:buffer";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { takenJson } from "../../src/api/asciiJson.js";

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

const parse = (json: string | Buffer): unknown => JSON.parse(typeof json === "string" ? json : json.toString("utf8"));

/** A request-like body: ASCII filler around a value, so that whatever the value holds stays a small share of the bytes. */
function mostlyAscii(value: unknown): Buffer {
  return Buffer.from(JSON.stringify({ value, filler: "x".repeat(64 * Buffer.byteLength(JSON.stringify(value))) }));
}

describe("takenJson", () => {
  it("parses to the very value the body holds, any characters included, written in ASCII", () => {
    fc.assert(
      fc.property(fc.jsonValue({ stringUnit: "binary" }), fc.boolean(), (value, withMark) => {
        const body = mostlyAscii(value);
        const json = takenJson(withMark ? Buffer.concat([BOM, body]) : body);
        expect(typeof json).toBe("string");
        expect(isAscii(Buffer.from(json as string, "latin1"))).toBe(true);
        expect(parse(json)).toEqual(JSON.parse(body.toString("utf8")));
      }),
      { numRuns: 500 },
    );
  });

  it("writes characters of two, three and four UTF-8 bytes as escapes, a surrogate pair for the last", () => {
    expect(takenJson(Buffer.from(`{"t":"é ✓ 😀","pad":"${"a".repeat(200)}"}`))).toBe(`{"t":"\\u00e9 \\u2713 \\ud83d\\ude00","pad":"${"a".repeat(200)}"}`);
  });

  it("keeps a body with more than a sixteenth of its bytes outside ASCII as it came, without a byte-order mark", () => {
    const chinese = Buffer.from(JSON.stringify({ messages: [{ role: "user", content: "上下文压缩".repeat(100) }] }));
    expect(takenJson(chinese)).toBe(chinese);
    const marked = takenJson(Buffer.concat([BOM, chinese]));
    expect(Buffer.isBuffer(marked) && marked.equals(chinese)).toBe(true);
  });

  it("keeps a body over 4 MiB with characters outside ASCII as it came, and takes one that is all ASCII as text", () => {
    const large = Buffer.from(JSON.stringify({ messages: [{ role: "user", content: `${"é".repeat(1_000)}${"a".repeat(4 * 1024 * 1024)}` }] }));
    expect(takenJson(large)).toBe(large);
    const ascii = Buffer.from(JSON.stringify({ messages: [{ role: "user", content: "a".repeat(4 * 1024 * 1024) }] }));
    expect(takenJson(ascii)).toBe(ascii.toString("latin1"));
  });

  it("refuses bytes that are not UTF-8, saying at which byte of the body as sent, at any size", () => {
    const broken = (before: string, after: number) => Buffer.concat([Buffer.from(`{"t":"${before}`), Buffer.from([0xff, 0xfe]), Buffer.from(`${"a".repeat(after)}"}`)]);
    expect(() => takenJson(broken("", 100))).toThrow("the body is not valid UTF-8 at byte 6; send JSON in UTF-8");
    // Characters before it of one to four bytes, a U+FFFD sent as such among them, and a byte-order mark, which counts.
    expect(() => takenJson(Buffer.concat([BOM, broken("aé✓\ufffd😀", 100)]))).toThrow("not valid UTF-8 at byte 22;");
    // A sequence cut short by ASCII, where its lead said more would follow.
    expect(() => takenJson(Buffer.from([0x7b, 0xe2, 0x9c, 0x7d]))).toThrow("not valid UTF-8 at byte 1;");
    expect(() => takenJson(broken("é", 4 * 1024 * 1024))).toThrow("not valid UTF-8 at byte 8;");
    expect(() => takenJson(broken("上下文压缩".repeat(100), 0))).toThrow(`not valid UTF-8 at byte ${6 + 1500};`);
  });

  it("leaves a body that is not JSON not JSON, characters outside strings included", () => {
    for (const text of [`{"a": é}`, `é{"a":1}`, `{"a":"b"} ✓`]) {
      const json = takenJson(Buffer.from(`${text}${" ".repeat(100)}`));
      expect(() => parse(json)).toThrow(SyntaxError);
    }
  });

  it("gives an empty body, or a byte-order mark alone, as empty text", () => {
    expect(takenJson(Buffer.alloc(0))).toBe("");
    expect(takenJson(BOM)).toBe("");
  });
});
