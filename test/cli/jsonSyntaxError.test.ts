/**
 * The scanner that tells a person where their JSON breaks must agree with
 * JSON.parse on what is JSON: otherwise it would point at the wrong place, or
 * at none. Checked on a table of the usual mistakes and on many texts made
 * by mutating valid JSON one character at a time.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { findJsonSyntaxError } from "../../src/cli/jsonSyntaxError.js";
import { repoRoot } from "../helpers/repoRoot.js";

describe("findJsonSyntaxError", () => {
  it.each([
    ['{"a": 1,}', 8, "a property name in double quotes"],
    ["[1, 2,]", 6, "a value (an object, array, string, number, true, false or null)"],
    ["{'a': 1}", 1, "a property name in double quotes"],
    ['{"a" 1}', 5, "':' after the property name"],
    ['["a" "b"]', 5, "',' or ']'"],
    ['"tab\there"', 4, "no control character inside a string (write it as an escape, such as \\n)"],
    ['"\\x"', 2, 'an escape: \\" \\\\ \\/ \\b \\f \\n \\r \\t or \\uXXXX'],
    ['"\\u12"', 2, "four hexadecimal digits after \\u"],
    ['{"a": [1, 2}', 11, "',' or ']'"],
    ['{"a": 1}\n{"b": 2}', 9, "the end of the input"],
    ["[01]", 2, "',' or ']'"],
    ["", 0, "a value (an object, array, string, number, true, false or null)"],
    ['{"a": "open', 11, 'a closing "'],
  ])("finds where %j breaks", (text, offset, expected) => {
    expect(() => JSON.parse(text)).toThrow();
    expect(findJsonSyntaxError(text)).toEqual({ offset, expected });
  });

  it("agrees with JSON.parse on which texts are JSON, on mutations of valid JSON", () => {
    const seeds = [
      readFileSync(path.join(repoRoot, "examples/session.json"), "utf8").slice(0, 2_000),
      JSON.stringify({ a: [1, -2.5e3, true, false, null, 'caf\u00e9\n"q"'], b: {}, c: [] }, null, 2),
      '{"lone": "\\ud800"}',
      "-0.0e+1",
    ];
    const characters = [..."{}[],:\"\\u01-.eE+ \ntnfax", "\u0001"];
    let seed = 42;
    const random = (below: number) => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed % below;
    };
    let refused = 0;
    for (let k = 0; k < 20_000; k++) {
      let text = seeds[k % seeds.length]!;
      for (let edit = 0; edit <= k % 3; edit++) {
        const at = random(text.length + 1);
        const character = characters[random(characters.length)]!;
        const kind = random(3);
        text = text.slice(0, at) + (kind === 0 ? "" : character) + text.slice(kind === 1 ? at : at + 1);
      }
      let parses = true;
      try {
        JSON.parse(text);
      } catch {
        parses = false;
        refused++;
      }
      expect(findJsonSyntaxError(text) === undefined, text).toBe(parses);
    }
    expect(refused).toBeGreaterThan(10_000);
  });

  it("walks a text nested a million levels deep without running out of stack", () => {
    const deep = `${"[".repeat(1_000_000)}${"]".repeat(999_999)}`;
    expect(findJsonSyntaxError(deep)).toEqual({ offset: 1_999_999, expected: "',' or ']'" });
  });
});
