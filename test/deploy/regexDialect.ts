/**
 * The regular-expression dialect values.schema.json's patterns keep to: what
 * Go's regexp (RE2, which Helm validates values with) and ECMAScript (Ajv,
 * which the tests validate with; `u` flag) read alike. `\s`, `\S`, `\d`,
 * `\w`, `\b` and `.` are out: RE2 reads them as ASCII (its `.` takes U+2028,
 * ECMAScript's does not), ECMAScript partly as Unicode, so a value with a
 * no-break space could pass `helm install` and crash every pod. So are
 * `\p{…}` and `\u…` (Unicode versions and syntax differ), lookaround, back
 * references and flags. Characters are written as themselves, or `\xHH`.
 */
import { spawnSync } from "node:child_process";
import { tmpdir } from "node:os";
import path from "node:path";
import { repoRoot } from "../helpers/repoRoot.js";

/** Escapes both dialects read as one character (`\\-` only in a class: ECMAScript refuses it outside). */
const LITERAL_ESCAPES = new Set([..."\\^$.|?*+()[]{}/", "t", "n", "r", "f", "v"]);

/** The escape at `pattern[at]` (a backslash): its length, or a problem. */
function escapeAt(pattern: string, at: number, inClass: boolean): number | string {
  const next = pattern[at + 1];
  if (next === undefined) return "a trailing backslash";
  if (LITERAL_ESCAPES.has(next) || (inClass && next === "-")) return 2;
  if (next === "x" && /^[0-9A-Fa-f]{2}$/.test(pattern.slice(at + 2, at + 4))) return 4;
  return `\\${next} at ${at}`;
}

/** What in `pattern` is outside the dialect both engines read alike; empty when nothing. */
export function dialectProblems(pattern: string): string[] {
  const problems: string[] = [];
  let inClass = false;
  for (let at = 0; at < pattern.length; ) {
    const c = pattern[at]!;
    if (c === "\\") {
      const escape = escapeAt(pattern, at, inClass);
      if (typeof escape === "string") {
        problems.push(escape);
        at += 2;
      } else at += escape;
      continue;
    }
    if (inClass) {
      if (c === "[") problems.push(`an unescaped [ in a class at ${at} (RE2 reads [: as a POSIX class)`);
      if (c === "]") inClass = false;
      at++;
      continue;
    }
    if (c === "[") {
      const negated = pattern[at + 1] === "^";
      const first = at + (negated ? 2 : 1);
      if (pattern[first] === "]") problems.push(`a class starting with ] at ${at}`);
      inClass = true;
      at = first;
      continue;
    }
    if (c === ".") problems.push(`. at ${at}`);
    if (c === "(" && pattern[at + 1] === "?" && pattern[at + 2] !== ":") problems.push(`(? other than (?: at ${at}`);
    if (c === "{") {
      const quantifier = /^\{[0-9]+(?:,[0-9]*)?\}/.exec(pattern.slice(at));
      if (quantifier === null || at === 0) problems.push(`a { that is no quantifier at ${at}`);
      else at += quantifier[0].length - 1;
    }
    if (c === "}") problems.push(`a lone } at ${at}`);
    at++;
  }
  if (inClass) problems.push("an unclosed class");
  return problems;
}

export interface SchemaPattern {
  /** Where: the keys leading to it, dotted. */
  readonly path: string;
  readonly pattern: string;
}

/** Every `pattern` of a JSON schema, wherever it is. */
export function schemaPatterns(schema: unknown, path = ""): SchemaPattern[] {
  if (Array.isArray(schema)) return schema.flatMap((item, index) => schemaPatterns(item, `${path}[${index}]`));
  if (typeof schema !== "object" || schema === null) return [];
  return Object.entries(schema).flatMap(([key, value]) =>
    key === "pattern" && typeof value === "string" ? [{ path, pattern: value }] : schemaPatterns(value, path === "" ? key : `${path}.${key}`),
  );
}

/** How Ajv reads a schema pattern (its default `unicodeRegExp`). */
export function ajvRegExp(pattern: string): RegExp {
  return new RegExp(pattern, "u");
}

/** Whether a Go toolchain is on PATH: CI installs one for helm-render. */
export const GO_AVAILABLE = spawnSync("go", ["version"]).error === undefined;

/** Per pattern, Go's compile error or whether each sample matches, by test/deploy/goregexp/main.go. */
export function goRegexpMatches(patterns: readonly string[], samples: readonly string[]): ({ error: string } | { matches: boolean[] })[] {
  const program = path.join(repoRoot, "test/deploy/goregexp/main.go");
  // Go wants a build cache even for `go run`; CI's sandbox may have no HOME to put it under.
  const env = { ...process.env, GOCACHE: process.env.GOCACHE ?? path.join(tmpdir(), "compactd-go-cache") };
  const run = spawnSync("go", ["run", program], { input: JSON.stringify({ patterns, samples }), encoding: "utf8", env, maxBuffer: 64 * 1024 * 1024 });
  if (run.status !== 0) throw new Error(`go run ${program} failed: ${run.stderr}`);
  return JSON.parse(run.stdout) as ({ error: string } | { matches: boolean[] })[];
}
