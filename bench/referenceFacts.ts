/**
 * The facts of a reference summary, and whether another text keeps them.
 *
 * A fact is something an agent needs exactly as written to carry on: a path or
 * file name, an identifier in backticks, a function or module name, a command,
 * a number with its unit. They are pulled out of the agent's own summary with
 * patterns, and a text keeps a fact when it contains it case-insensitively at
 * word boundaries. Lexical recall is a floor on what a reader could recover,
 * not a judgement of the prose.
 */

export type FactKind = "path" | "backticked" | "name" | "number";

export const FACT_KINDS: readonly FactKind[] = ["path", "backticked", "name", "number"];

export interface Fact {
  readonly kind: FactKind;
  readonly text: string;
}

const PATTERNS: Readonly<Record<FactKind, RegExp>> = {
  // a/b/c.ext, ./x, lib/foo/, and bare file names with a known extension
  path: /(?:[\w.@-]+\/)+[\w.@-]+|\b[\w-]+\.(?:exs?|heex|ts|tsx|js|jsx|mjs|json|jsonl|md|py|go|rs|css|html|sh|ya?ml|toml|sql|lock|txt)\b/g,
  backticked: /`([^`\n]{2,120})`/g,
  // Module.Name, function/2, snake_case_name, camelCaseName, name(
  name: /\b[A-Z][a-zA-Z0-9]+(?:\.[A-Z][a-zA-Z0-9]+)+\b|\b[a-z_][a-z0-9_?!]*\/\d\b|\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b|\b[a-z]+[A-Z][a-zA-Z0-9]*\b|\b[a-zA-Z_]\w*(?=\()/g,
  number: /\b\d+(?:[.,]\d+)?\s?(?:tests?|failures?|errors?|warnings?|ms|seconds?|minutes?|s|KB|MB|GB|kB|tokens?|lines?|files?|chars?|characters|bytes|%|px|rem)(?!\w)/gi,
};

/** Facts of `reference`, each once (case-insensitively), that also occur in `source`. */
export function factsOf(reference: string, source: string): Fact[] {
  const seen = new Set<string>();
  const facts: Fact[] = [];
  const haystack = source.toLowerCase();
  for (const kind of FACT_KINDS) {
    for (const match of reference.matchAll(PATTERNS[kind])) {
      const text = (match[1] ?? match[0]).trim();
      const key = text.toLowerCase();
      if (text.length < 3 || seen.has(key)) continue;
      seen.add(key);
      if (containsWord(haystack, key)) facts.push({ kind, text });
    }
  }
  return facts;
}

/** Whether lower-cased `haystack` holds lower-cased `needle` with no word character glued to either end. */
export function containsWord(haystack: string, needle: string): boolean {
  let at = haystack.indexOf(needle);
  while (at >= 0) {
    const before = at === 0 ? "" : haystack[at - 1]!;
    const after = haystack[at + needle.length] ?? "";
    if (!/\w/.test(before) || !/\w/.test(needle[0]!)) {
      if (!/\w/.test(after) || !/\w/.test(needle.at(-1)!)) return true;
    }
    at = haystack.indexOf(needle, at + 1);
  }
  return false;
}

/** How many of `facts` a text keeps. */
export function kept(facts: readonly Fact[], text: string): number {
  const haystack = text.toLowerCase();
  return facts.filter((f) => containsWord(haystack, f.text.toLowerCase())).length;
}
