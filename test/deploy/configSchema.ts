/**
 * The part of the Helm chart's values.schema.json that the service's own
 * rules state: each `config.*` number, choice and flag is validated as
 * src/config.ts reads it (its ValueForm), and each text variable and the
 * other free-text values by a pattern written here, so `helm install`
 * refuses what the pods would refuse at start-up. The test keeps the
 * checked-in schema equal to this (`UPDATE_HELM_SCHEMA=1 npx vitest run
 * test/deploy/helmConfigBounds.test.ts` rewrites it).
 *
 * Values come as strings (values.yaml, `--set-string`) or as numbers and
 * booleans (`--set` parses them); a blank string means "the service's
 * default", as the service reads it.
 *
 * Helm applies the patterns with Go's regexp (RE2), the tests with Ajv
 * (ECMAScript), and the two read `\s`, `\S`, `\d`, `\w` and `.` differently
 * (ASCII against Unicode), so every pattern spells its classes out: see
 * regexDialect.ts, which a test holds every pattern of the schema to.
 */
import { CONFIG_VARIABLES, type ValueForm } from "../../src/config.js";

type Schema = Record<string, unknown>;

/**
 * What the service trims from around a value, and the chart with it
 * (compactd.trim in _helpers.tpl): the code points JavaScript's `trim()`
 * removes, read from the engine the service runs on. Go's strings.TrimSpace,
 * sprig's `trim`, removes another set (U+0085 but not U+FEFF), so the chart
 * trims this set by name.
 */
export const SERVICE_WHITESPACE: readonly number[] = (() => {
  const found: number[] = [];
  for (let code = 0; code <= 0x10ffff; code++) {
    if ((code < 0xd800 || code > 0xdfff) && String.fromCodePoint(code).trim() === "") found.push(code);
  }
  return found;
})();

/** C0 and C1 control characters and DEL: Unicode's Cc, the control characters the service's rules refuse. */
const CONTROLS: readonly number[] = [...range(0x00, 0x1f), ...range(0x7f, 0x9f)];

function range(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, index) => from + index);
}

/**
 * One code point as both dialects read it inside a class: controls as
 * `\xHH` (the one escape both take for them), class syntax escaped, the
 * rest as itself.
 */
function classCharacter(code: number): string {
  if (code < 0x20 || (code >= 0x7f && code <= 0x9f)) return `\\x${code.toString(16).toUpperCase().padStart(2, "0")}`;
  const character = String.fromCodePoint(code);
  return /[\\\]\[^-]/.test(character) ? `\\${character}` : character;
}

/** A character class of `codes` (any order), runs of three or more written as ranges; `[^…]` when `negated`. */
export function characterClass(codes: readonly number[], negated = false): string {
  const sorted = [...new Set(codes)].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let start = 0; start < sorted.length; ) {
    let end = start;
    while (end + 1 < sorted.length && sorted[end + 1] === sorted[end]! + 1) end++;
    const [first, last] = [sorted[start]!, sorted[end]!];
    if (end - start >= 2) parts.push(`${classCharacter(first)}-${classCharacter(last)}`);
    else parts.push(...sorted.slice(start, end + 1).map(classCharacter));
    start = end + 1;
  }
  return `[${negated ? "^" : ""}${parts.join("")}]`;
}

/** White space as the service reads it. */
const SPACE = characterClass(SERVICE_WHITESPACE);
/** Neither white space nor a control character: what a URL or a model id is made of. */
const VISIBLE = characterClass([...SERVICE_WHITESPACE, ...CONTROLS], true);

/** One of `alternatives`, or nothing, with white space around: what the service trims away. */
function blankOr(alternatives: readonly string[]): string {
  return `^${SPACE}*(?:${alternatives.join("|")})?${SPACE}*$`;
}

/** `alternatives` as one term, to follow a prefix. */
function group(alternatives: readonly string[]): string {
  return alternatives.length === 1 ? alternatives[0]! : `(?:${alternatives.join("|")})`;
}

function digits(from: number, to: number): string {
  return from === to ? String(from) : `[${from}-${to}]`;
}

function anyDigits(count: number): string {
  return count === 0 ? "" : count === 1 ? "[0-9]" : `[0-9]{${count}}`;
}

/** Alternatives matching the digit strings of one length from `low` to `high`, both of that length. */
function sameLength(low: string, high: string): string[] {
  if (low === high) return [low];
  const rest = low.length - 1;
  const [first, last] = [Number(low[0]), Number(high[0])];
  if (first === last) return [low[0]! + group(sameLength(low.slice(1), high.slice(1)))];
  const fromZero = /^0*$/.test(low.slice(1));
  const toNines = /^9*$/.test(high.slice(1));
  const parts: string[] = [];
  if (!fromZero) parts.push(low[0]! + group(sameLength(low.slice(1), "9".repeat(rest))));
  const [middleFrom, middleTo] = [fromZero ? first : first + 1, toNines ? last : last - 1];
  if (middleFrom <= middleTo) parts.push(digits(middleFrom, middleTo) + anyDigits(rest));
  if (!toNines) parts.push(high[0]! + group(sameLength("0".repeat(rest), high.slice(1))));
  return parts;
}

/** Alternatives matching the decimal numerals without leading zeros from `min` to `max` (whole, 0 ≤ min ≤ max). */
export function rangeAlternatives(min: number, max: number): string[] {
  const [low, high] = [String(min), String(max)];
  const parts: string[] = [];
  for (let length = low.length; length <= high.length; length++) {
    const from = length === low.length ? low : `1${"0".repeat(length - 1)}`;
    const to = length === high.length ? high : "9".repeat(length);
    parts.push(...sameLength(from, to));
  }
  return parts;
}

/** An integer as the service reads it: digits only, leading zeros allowed. */
function integerPattern(min: number, max: number): string {
  return blankOr([`0*${group(rangeAlternatives(min, max))}`]);
}

/**
 * A number above 0 and at most `max` (whole) as the service reads it:
 * digits, then maybe a dot and digits.
 */
function decimalPattern(max: number): string {
  const parts = [`0*${max}(?:\\.0+)?`, "0+\\.[0-9]*[1-9][0-9]*"];
  if (max > 1) parts.unshift(`0*${group(rangeAlternatives(1, max - 1))}(?:\\.[0-9]+)?`);
  return blankOr(parts);
}

/** One of `values` in any case, as the service lower-cases what it reads. */
function anyCasePattern(values: readonly string[]): string {
  const anyCase = (value: string): string =>
    [...value].map((c) => (c.toLowerCase() !== c.toUpperCase() ? `[${c.toLowerCase()}${c.toUpperCase()}]` : c.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))).join("");
  return blankOr(values.map(anyCase));
}

function maxText(form: { max: number; maxInWords?: string }): string {
  return form.maxInWords === undefined ? `${form.max}` : `${form.max} (${form.maxInWords})`;
}

/** Anything but white space, a control character and `excluded`. */
function visibleBut(excluded: string): string {
  return characterClass([...SERVICE_WHITESPACE, ...CONTROLS, ...[...excluded].map((c) => c.codePointAt(0)!)], true);
}

const HTTP_URL = "[hH][tT][tT][pP][sS]?://";
const LABEL = "[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?";
const OCTET = "(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])";

/**
 * One COMPACTD_CALLBACK_ALLOW entry (webhooks/callbackAllow.ts): a host name
 * in ASCII (`*.` for subdomains; an IPv4 address reads as one), an IPv4 CIDR,
 * or what could be an IPv6 address or CIDR (node:net tells the rest).
 */
const ALLOW_ENTRY = [
  `(?:\\*\\.)?${LABEL}(?:\\.${LABEL})*\\.?`,
  `${OCTET}(?:\\.${OCTET}){3}/(?:0{0,2}[0-9]|0?[12][0-9]|0?3[0-2])`,
  "[0-9A-Fa-f.]*:[0-9A-Fa-f:.]*(?:%[0-9A-Za-z._~-]+)?(?:/(?:0{0,2}[0-9]|0?[1-9][0-9]|1[01][0-9]|12[0-8]))?",
].join("|");

const HTTP_URL_SCHEMA: Schema = {
  description: "An http:// or https:// URL (any case) without spaces or control characters; blank: unset.",
  type: "string",
  pattern: blankOr([`${HTTP_URL}${VISIBLE}+`]),
};

/**
 * The text variables' patterns: as near the service's own check as a
 * pattern gets; what only its parsers tell is in the test's
 * LOOSER_THAN_THE_SERVICE. A text variable missing here keeps its
 * hand-written schema.
 */
const TEXT_SCHEMAS: Readonly<Record<string, Schema>> = {
  ANTHROPIC_BASE_URL: HTTP_URL_SCHEMA,
  OTEL_EXPORTER_OTLP_ENDPOINT: HTTP_URL_SCHEMA,
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: HTTP_URL_SCHEMA,
  COMPACTD_MODEL: {
    description: "A model id: 1-200 characters without spaces or control characters; blank: the summarizer's default.",
    type: "string",
    pattern: blankOr([`${VISIBLE}{1,200}`]),
  },
  COMPACTD_QUEUE_PREFIX: {
    description:
      "A prefix without spaces or control characters whose braces, if any, form a non-empty {hash tag}: the first { is closed by a } with something between; blank: the service's default.",
    type: "string",
    pattern: blankOr([`${visibleBut("{}")}*`, `${visibleBut("{")}*\\{${visibleBut("{}")}+\\}${VISIBLE}*`]),
  },
  COMPACTD_CALLBACK_ALLOW: {
    description: "Comma-separated host names in ASCII (*. for subdomains), IP addresses or CIDRs; blank: none.",
    type: "string",
    pattern: `^${SPACE}*(?:${ALLOW_ENTRY})?(?:${SPACE}*,${SPACE}*(?:${ALLOW_ENTRY})?)*${SPACE}*$`,
  },
};

/**
 * Patterns of values outside `config` that other programs read as they are
 * (KEDA, Prometheus, the service's REDIS_URL): no white space or control
 * character anywhere. Keyed by the value's dotted path in values.yaml.
 */
const FIELD_PATTERNS: Readonly<Record<string, string>> = {
  "redis.url": `^(rediss?://${VISIBLE}+)?$`,
  "keda.redis.address": `^(${VISIBLE}+:[0-9]+(,${VISIBLE}+:[0-9]+)*)?$`,
  "keda.prometheus.serverAddress": `^(https?://${VISIBLE}+)?$`,
  "metrics.prometheusRule.runbookBaseUrl": `^(https?://${VISIBLE}+)?$`,
};

/** The schema of one `config.*` value of this form, or undefined for text the service's own code checks. */
export function configValueSchema(form: ValueForm): Schema | undefined {
  const asString = "as a string (blank: the service's default)";
  switch (form.kind) {
    case "integer": {
      const range = form.max === Number.MAX_SAFE_INTEGER ? `≥ ${form.min}` : `from ${form.min} to ${maxText(form)}`;
      return {
        description: `A whole number ${range}, ${asString} or a number.`,
        anyOf: [
          { type: "string", pattern: integerPattern(form.min, form.max) },
          { type: "integer", minimum: form.min, maximum: form.max },
        ],
      };
    }
    case "decimal":
      return {
        description: `A number above 0 and at most ${maxText(form)}, decimals allowed, ${asString} or a number.`,
        anyOf: [
          { type: "string", pattern: decimalPattern(form.max) },
          { type: "number", exclusiveMinimum: 0, maximum: form.max },
        ],
      };
    case "choice":
      return {
        description: `One of ${form.values.join(", ")}, in any case; blank: the service's default.`,
        type: "string",
        pattern: anyCasePattern(form.values),
      };
    case "flag":
      return {
        description: `true or false, in any case, ${asString} or a boolean.`,
        anyOf: [{ type: "string", pattern: anyCasePattern(["true", "false"]) }, { type: "boolean" }],
      };
    case "text":
      return undefined;
  }
}

/** The schema of the value at dotted `path` (under `properties` at each step). */
function propertyAt(schema: Schema, path: string): Schema {
  return path.split(".").reduce((node, key) => {
    const child = (node.properties as Record<string, Schema> | undefined)?.[key];
    if (child === undefined) throw new Error(`values.schema.json has no ${path}`);
    return child;
  }, schema);
}

/** A copy of `schema` with every generated `config.*` property and pattern replaced by what this file says. */
export function withGeneratedSchema(schema: Schema): Schema {
  const copy = structuredClone(schema);
  const config = propertyAt(copy, "config").properties as Record<string, Schema>;
  for (const variable of CONFIG_VARIABLES) {
    const generated = configValueSchema(variable.form) ?? TEXT_SCHEMAS[variable.env];
    if (generated !== undefined && variable.env in config) config[variable.env] = generated;
  }
  for (const [path, pattern] of Object.entries(FIELD_PATTERNS)) propertyAt(copy, path).pattern = pattern;
  return copy;
}

/**
 * values.schema.json's text: JSON with the white space of patterns other
 * than the ASCII space written as `\\uXXXX`, so a reader sees it.
 */
export function schemaText(schema: Schema): string {
  const json = JSON.stringify(schema, null, 2);
  const invisible = new RegExp(characterClass(SERVICE_WHITESPACE.filter((code) => code > 0x7f)), "gu");
  return `${json.replace(invisible, (c) => `\\u${c.codePointAt(0)!.toString(16).padStart(4, "0")}`)}\n`;
}
