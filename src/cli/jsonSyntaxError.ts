/**
 * Where a text stops being JSON, and what was expected there.
 *
 * `JSON.parse` says why it refused a text in words that change with the V8
 * version, and Node 20 often gives no position at all ("Unexpected token
 * ']', ..." followed by a snippet of the text, line breaks included). A
 * person fixing a file by hand needs a line and a column, so once `JSON.parse`
 * has refused a text, this scanner walks it again to find the first place
 * the grammar (RFC 8259) does not allow. It keeps its nesting on a stack of
 * its own, so a file nested a million levels deep is no problem either.
 */

export interface JsonSyntaxError {
  /** Index in the text (UTF-16 code units) of the first character the grammar does not allow there, or its length. */
  readonly offset: number;
  /** What the grammar allows there, in words. */
  readonly expected: string;
}

export const END_OF_INPUT = "the end of the input";

/** The first syntax error of `text`, or undefined when it is JSON. */
export function findJsonSyntaxError(text: string): JsonSyntaxError | undefined {
  let i = 0;
  const closers: string[] = [];
  let wantValue = true;
  const fail = (expected: string): JsonSyntaxError => ({ offset: i, expected });
  const skipSpace = () => {
    while (i < text.length && " \t\n\r".includes(text[i]!)) i++;
  };
  /** Reads a string from its opening quote; the error, if it is not one. */
  const readString = (): JsonSyntaxError | undefined => {
    i++;
    for (;;) {
      const c = text[i];
      if (c === undefined) return fail('a closing "');
      if (c === '"') {
        i++;
        return undefined;
      }
      if (c === "\\") {
        i++;
        if (text[i] === "u") {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 1, i + 5))) return fail("four hexadecimal digits after \\u");
          i += 5;
        } else if (text[i] !== undefined && '"\\/bfnrt'.includes(text[i]!)) {
          i++;
        } else {
          return fail('an escape: \\" \\\\ \\/ \\b \\f \\n \\r \\t or \\uXXXX');
        }
      } else if (c < " ") {
        return fail("no control character inside a string (write it as an escape, such as \\n)");
      } else {
        i++;
      }
    }
  };
  /** Reads `"name":` after an object's `{` or `,`. */
  const readKey = (): JsonSyntaxError | undefined => {
    skipSpace();
    if (text[i] !== '"') return fail('a property name in double quotes');
    const error = readString();
    if (error !== undefined) return error;
    skipSpace();
    if (text[i] !== ":") return fail("':' after the property name");
    i++;
    return undefined;
  };
  const number = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

  for (;;) {
    skipSpace();
    if (wantValue) {
      const c = text[i];
      if (c === "{" || c === "[") {
        i++;
        skipSpace();
        if (text[i] === (c === "{" ? "}" : "]")) {
          i++;
          wantValue = false;
          continue;
        }
        closers.push(c === "{" ? "}" : "]");
        if (c === "{") {
          const error = readKey();
          if (error !== undefined) return error;
        }
        continue;
      }
      if (c === '"') {
        const error = readString();
        if (error !== undefined) return error;
      } else {
        number.lastIndex = i;
        const literal = ["true", "false", "null"].find((word) => text.startsWith(word, i));
        if (literal !== undefined) i += literal.length;
        else if (number.test(text)) i = number.lastIndex;
        else return fail("a value (an object, array, string, number, true, false or null)");
      }
      wantValue = false;
      continue;
    }
    const closer = closers.at(-1);
    if (closer === undefined) return i === text.length ? undefined : fail(END_OF_INPUT);
    if (text[i] === closer) {
      i++;
      closers.pop();
    } else if (text[i] === ",") {
      i++;
      if (closer === "}") {
        const error = readKey();
        if (error !== undefined) return error;
      }
      wantValue = true;
    } else {
      return fail(`',' or '${closer}'`);
    }
  }
}

/**
 * Where `error` lies in `text` and what was there, as a person fixing the
 * file by hand reads it: `line L, column C: expected …, found …`. For a text
 * that is one line of a larger file (JSON Lines), `line` is its number there,
 * and its end is called the end of the line.
 */
export function describeJsonSyntaxError(text: string, error: JsonSyntaxError, line?: number): string {
  const end = line === undefined ? END_OF_INPUT : "the end of the line";
  const before = text.slice(0, error.offset);
  const at = text.codePointAt(error.offset);
  const found = at === undefined ? end : JSON.stringify(String.fromCodePoint(at));
  const expected = error.expected === END_OF_INPUT ? end : error.expected;
  return `line ${line ?? before.split("\n").length}, column ${error.offset - before.lastIndexOf("\n")}: expected ${expected}, found ${found}`;
}
