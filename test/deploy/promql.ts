/**
 * Enough PromQL for tests to list the series selectors of a query (metric
 * name and label matchers), so dashboards and alert rules can be checked
 * against the metrics the service really registers. Grafana variables
 * (`$namespace`, `$__rate_interval`) and chart placeholders are tolerated.
 */

export interface Matcher {
  readonly label: string;
  readonly op: "=" | "!=" | "=~" | "!~";
  readonly value: string;
}

export interface Selector {
  readonly metric: string;
  readonly matchers: readonly Matcher[];
}

type Token =
  | { readonly kind: "string"; readonly value: string }
  | { readonly kind: "ident"; readonly value: string }
  | { readonly kind: "number" | "variable" | "op" | "punct"; readonly value: string };

const TOKEN =
  /\s+|("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`)|(\$\{?\w+\}?)|(\d[\w.]*)|([A-Za-z_:][\w:]*)|(=~|!~|!=|==|<=|>=|[-+*/%^<>=])|([(){}[\],])/y;

function tokenize(expr: string): Token[] {
  const tokens: Token[] = [];
  TOKEN.lastIndex = 0;
  while (TOKEN.lastIndex < expr.length) {
    const at = TOKEN.lastIndex;
    const match = TOKEN.exec(expr);
    if (match === null) throw new Error(`cannot read PromQL at "${expr.slice(at, at + 20)}" in: ${expr}`);
    const [, string, variable, number, ident, op, punct] = match;
    if (string !== undefined) tokens.push({ kind: "string", value: unquote(string) });
    else if (variable !== undefined) tokens.push({ kind: "variable", value: variable });
    else if (number !== undefined) tokens.push({ kind: "number", value: number });
    else if (ident !== undefined) tokens.push({ kind: "ident", value: ident });
    else if (op !== undefined) tokens.push({ kind: "op", value: op });
    else if (punct !== undefined) tokens.push({ kind: "punct", value: punct });
  }
  return tokens;
}

function unquote(literal: string): string {
  const body = literal.slice(1, -1);
  return literal.startsWith("`") ? body : body.replace(/\\(.)/g, "$1");
}

/** Binary-operator keywords and modifiers; the grouping ones take a label list. */
const KEYWORDS = new Set(["and", "or", "unless", "bool", "offset", "by", "without", "on", "ignoring", "group_left", "group_right", "atan2"]);
const LABEL_LISTS = new Set(["by", "without", "on", "ignoring", "group_left", "group_right"]);
const AGGREGATIONS = new Set(["sum", "min", "max", "avg", "group", "stddev", "stdvar", "count", "count_values", "bottomk", "topk", "quantile", "limitk", "limit_ratio"]);

function closing(tokens: readonly Token[], from: number, open: string, close: string): number {
  let depth = 0;
  for (let i = from; i < tokens.length; i++) {
    const token = tokens[i]!;
    if (token.kind !== "punct") continue;
    if (token.value === open) depth++;
    if (token.value === close && --depth === 0) return i;
  }
  throw new Error(`unbalanced "${open}"`);
}

/**
 * Every series selector in `expr`. Identifiers named in `ignore` (template
 * placeholders) are skipped wherever they appear.
 */
export function selectors(expr: string, ignore: ReadonlySet<string> = new Set()): Selector[] {
  const tokens = tokenize(expr);
  const result: Selector[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    const next = tokens[i + 1];
    if (token.kind === "punct" && token.value === "[") {
      i = closing(tokens, i, "[", "]");
      continue;
    }
    if (token.kind !== "ident" || ignore.has(token.value)) continue;
    if (KEYWORDS.has(token.value)) {
      if (LABEL_LISTS.has(token.value) && next?.value === "(") i = closing(tokens, i + 1, "(", ")");
      continue;
    }
    // A function call, or an aggregation followed by its grouping clause.
    if (next?.value === "(" || (AGGREGATIONS.has(token.value) && next?.kind === "ident" && LABEL_LISTS.has(next.value))) continue;
    const matchers: Matcher[] = [];
    if (next?.value === "{") {
      const end = closing(tokens, i + 1, "{", "}");
      const inside = tokens.slice(i + 2, end).filter((t) => !(t.kind === "ident" && ignore.has(t.value)) && t.value !== ",");
      for (let j = 0; j < inside.length; j += 3) {
        const [label, op, value] = [inside[j], inside[j + 1], inside[j + 2]];
        if (label?.kind !== "ident" || op?.kind !== "op" || value?.kind !== "string") {
          throw new Error(`cannot read the label matchers of ${token.value} in: ${expr}`);
        }
        matchers.push({ label: label.value, op: op.value as Matcher["op"], value: value.value });
      }
      i = end;
    }
    result.push({ metric: token.value, matchers });
  }
  return result;
}

/** The values a matcher can match, for a closed set of label values: `a|b` → [a, b]. */
export function matcherValues(matcher: Matcher): string[] {
  return matcher.op === "=" || matcher.op === "!=" ? [matcher.value] : matcher.value.split("|");
}
