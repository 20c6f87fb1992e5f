/**
 * A reader for Helm's Go templates, for tests that cannot run `helm`:
 * splits a template into text and actions (strings, raw strings and comments
 * inside actions respected), checks that blocks are balanced, and turns a
 * template into YAML that can be parsed by replacing every action with a
 * placeholder. It checks structure, not what the template would render.
 */

export interface Action {
  /** The action's text between the delimiters and trim markers, trimmed. */
  readonly body: string;
  /** 1-based line where it starts. */
  readonly line: number;
  readonly comment: boolean;
}

export type Segment = { readonly kind: "text"; readonly text: string } | ({ readonly kind: "action" } & Action);

/** Stands in for every action in the YAML view; never a real key or value in the chart. */
export const PLACEHOLDER = "__TPL__";

function lineAt(text: string, index: number): number {
  return text.slice(0, index).split("\n").length;
}

/** Index just past the `}}` that closes the action whose body starts at `from`. */
function actionEnd(text: string, from: number, line: number): number {
  let i = from;
  while (i < text.length) {
    const char = text[i]!;
    if (text.startsWith("}}", i)) return i + 2;
    if (char === '"' || char === "'") {
      i++;
      while (i < text.length && text[i] !== char) {
        if (text[i] === "\n") throw new Error(`line ${lineAt(text, i)}: string in the action of line ${line} runs past the end of the line`);
        i += text[i] === "\\" ? 2 : 1;
      }
      if (i >= text.length) break;
      i++;
    } else if (char === "`") {
      const close = text.indexOf("`", i + 1);
      if (close < 0) break;
      i = close + 1;
    } else {
      i++;
    }
  }
  throw new Error(`line ${line}: "{{" is never closed by "}}"`);
}

export function segments(text: string): Segment[] {
  const result: Segment[] = [];
  let position = 0;
  while (position < text.length) {
    const open = text.indexOf("{{", position);
    if (open < 0) {
      result.push({ kind: "text", text: text.slice(position) });
      break;
    }
    if (open > position) result.push({ kind: "text", text: text.slice(position, open) });
    const line = lineAt(text, open);
    let bodyStart = open + 2;
    if (/^- /.test(text.slice(bodyStart, bodyStart + 2))) bodyStart += 2;
    let end: number;
    let comment = false;
    if (text.startsWith("/*", bodyStart)) {
      const close = text.indexOf("*/", bodyStart + 2);
      if (close < 0) throw new Error(`line ${line}: comment is never closed by "*/"`);
      const after = /^( -)?}}/.exec(text.slice(close + 2));
      if (after === null) throw new Error(`line ${lineAt(text, close)}: a comment's "*/" must be followed by "}}"`);
      end = close + 2 + after[0].length;
      comment = true;
    } else {
      end = actionEnd(text, bodyStart, line);
    }
    const body = text
      .slice(bodyStart, end - 2)
      .replace(/ -$/, "")
      .trim();
    result.push({ kind: "action", body, line, comment });
    position = end;
  }
  return result;
}

/** Parentheses outside strings; an unbalanced pipeline is a parse error in Go templates. */
function parenthesesBalanced(body: string): boolean {
  let depth = 0;
  const bare = body.replace(/"(?:[^"\\]|\\.)*"|`[^`]*`|'(?:[^'\\]|\\.)*'/g, "");
  for (const char of bare) {
    if (char === "(") depth++;
    if (char === ")" && --depth < 0) return false;
  }
  return depth === 0;
}

const OPENERS = new Set(["if", "range", "with", "define", "block"]);

/**
 * Problems with the template's structure: unclosed actions or strings (thrown
 * by {@link segments}), blocks without `end`, `end` or `else` without a
 * block, unbalanced parentheses. Empty when balanced.
 */
export function balanceProblems(text: string): string[] {
  let parts: Segment[];
  try {
    parts = segments(text);
  } catch (error) {
    return [(error as Error).message];
  }
  const problems: string[] = [];
  const open: { keyword: string; line: number }[] = [];
  for (const part of parts) {
    if (part.kind !== "action" || part.comment) continue;
    if (!parenthesesBalanced(part.body)) problems.push(`line ${part.line}: unbalanced parentheses in {{ ${part.body} }}`);
    const keyword = /^[a-z]+/.exec(part.body)?.[0] ?? "";
    if (OPENERS.has(keyword)) open.push({ keyword, line: part.line });
    else if (keyword === "end") {
      if (open.pop() === undefined) problems.push(`line ${part.line}: "end" without an open block`);
    } else if (keyword === "else") {
      const top = open.at(-1);
      if (top === undefined || !["if", "range", "with"].includes(top.keyword)) {
        problems.push(`line ${part.line}: "else" outside an if, range or with`);
      }
    }
  }
  for (const block of open) problems.push(`line ${block.line}: "${block.keyword}" is never closed by "end"`);
  return problems;
}

const SENTINEL = "\u0000";

/**
 * The template as YAML: a line holding nothing but actions (control flow,
 * `include … | nindent`) is dropped, as the chart writes such lines at the
 * indentation of what they produce; every other action becomes
 * {@link PLACEHOLDER}.
 */
export function yamlView(text: string): string {
  const flat = segments(text)
    .map((part) => (part.kind === "text" ? part.text : SENTINEL))
    .join("");
  return flat
    .split("\n")
    .filter((line) => !(line.includes(SENTINEL) && line.replaceAll(SENTINEL, "").trim() === ""))
    .map((line) => line.replaceAll(SENTINEL, PLACEHOLDER))
    .join("\n");
}

/** Names of the templates a file defines. */
export function definedTemplates(text: string): string[] {
  return segments(text).flatMap((part) => {
    if (part.kind !== "action") return [];
    const name = /^define\s+"([^"]+)"/.exec(part.body)?.[1];
    return name === undefined ? [] : [name];
  });
}

/** Names of the templates a file includes (`include "x"` and `template "x"`). */
export function includedTemplates(text: string): string[] {
  return segments(text).flatMap((part) =>
    part.kind !== "action" ? [] : [...part.body.matchAll(/\b(?:include|template)\s+"([^"]+)"/g)].map((match) => match[1]!),
  );
}

/**
 * The `.Values` paths a file reads: `.Values.a.b` (also through `$.Values` and
 * `.ctx.Values`) and, for variables assigned a `.Values` path
 * (`$rule := .Values.metrics.prometheusRule`), `$rule.x`.
 */
export function valuesPaths(text: string): string[][] {
  const actions = segments(text).filter((part): part is Extract<Segment, { kind: "action" }> => part.kind === "action" && !part.comment);
  const aliases = new Map<string, string[]>();
  for (const action of actions) {
    for (const match of action.body.matchAll(/\$(\w+)\s*:=\s*\.Values((?:\.\w+)+)(?=\s|$)/g)) {
      aliases.set(match[1]!, match[2]!.slice(1).split("."));
    }
  }
  const paths: string[][] = [];
  for (const action of actions) {
    const body = action.body.replace(/"(?:[^"\\]|\\.)*"|`[^`]*`/g, '""');
    for (const match of body.matchAll(/\.Values((?:\.\w+)+)/g)) paths.push(match[1]!.slice(1).split("."));
    for (const match of body.matchAll(/\$(\w+)((?:\.\w+)+)/g)) {
      const base = aliases.get(match[1]!);
      if (base !== undefined) paths.push([...base, ...match[2]!.slice(1).split(".")]);
    }
  }
  return paths;
}
