/**
 * The names a piece of source code declares: functions, classes, types,
 * modules, constants.
 *
 * When an agent writes a file, the content is far too long to keep, but the
 * names it just defined are what its next steps call, test and refer to. A
 * summary that says "wrote lib/spotter/parser.ex" without `parse_line/2` sends
 * the agent back to re-read its own work. The patterns cover the declaration
 * keywords of the languages agents write most (TypeScript/JavaScript, Python,
 * Go, Rust, Elixir, Ruby, Java-like and shell) and match only at the start of a
 * line, so prose that happens to contain "function of" is not mistaken for code.
 */

/** At most this many names are reported per text; the first ones declared are kept. */
const MAX_DECLARED_NAMES = 24;

const DECLARATION = new RegExp(
  [
    // export default async function name / class Name / interface Name / type Name / enum Name
    String.raw`^[ \t]*(?:export\s+)?(?:default\s+)?(?:declare\s+)?(?:abstract\s+)?(?:async\s+)?(?:function\*?|class|interface|type|enum|namespace)\s+([A-Za-z_$][\w$]*)`,
    // export const name = / let name = / var name =
    String.raw`^[ \t]*(?:export\s+)?(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*[=:]`,
    // Python def/class, Ruby def/class/module
    String.raw`^[ \t]*(?:async\s+)?(?:def|class|module)\s+([A-Za-z_][\w.?!]*)`,
    // Elixir defmodule/def/defp/defmacro
    String.raw`^[ \t]*(?:defmodule|defp?|defmacrop?|defguard|defstruct)\s+([A-Za-z_][\w.?!]*)`,
    // Go func (receiver) Name / type Name
    String.raw`^func\s+(?:\([^)]*\)\s*)?([A-Za-z_]\w*)`,
    // Rust fn/struct/trait/mod/enum with optional pub
    String.raw`^[ \t]*(?:pub(?:\([^)]*\))?\s+)?(?:async\s+)?(?:fn|struct|trait|mod|enum|impl)\s+([A-Za-z_]\w*)`,
    // shell: name() {
    String.raw`^[ \t]*([A-Za-z_][\w-]*)\s*\(\)\s*\{`,
  ].join("|"),
  "gm",
);

/** Declared names in `code`, in order of first declaration, without repeats. */
export function declaredNames(code: string): string[] {
  const names = new Set<string>();
  for (const match of code.matchAll(DECLARATION)) {
    const name = match.slice(1).find((group) => group !== undefined);
    if (name === undefined) continue;
    names.add(name);
    if (names.size >= MAX_DECLARED_NAMES) break;
  }
  return [...names];
}
