/**
 * The part of the Helm chart's values.schema.json that the service's own
 * rules state: each `config.*` number, choice and flag is validated as
 * src/config.ts reads it (its ValueForm), so `helm install` refuses what the
 * pods would refuse at start-up. The test keeps the checked-in schema equal
 * to this (`UPDATE_HELM_SCHEMA=1 npx vitest run test/deploy/helmConfigBounds.test.ts`
 * rewrites it). Text variables (URLs, lists, names) keep their hand-written
 * patterns.
 *
 * Values come as strings (values.yaml, `--set-string`) or as numbers and
 * booleans (`--set` parses them); a blank string means "the service's
 * default", as the service reads it. Patterns use only what both JavaScript
 * (Ajv, the tests) and Go's RE2 (Helm) read alike.
 */
import { CONFIG_VARIABLES, type ValueForm } from "../../src/config.js";

type Schema = Record<string, unknown>;

/** One of `alternatives`, or nothing, with spaces around: what the service trims away. */
function blankOr(alternatives: readonly string[]): string {
  return `^\\s*(?:${alternatives.join("|")})?\\s*$`;
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

/** `schema` with every generated `config.*` property replaced by what the service's rules say, in place. */
export function withGeneratedConfig(schema: Schema): Schema {
  const copy = structuredClone(schema);
  const config = ((copy.properties as Record<string, Schema>).config!.properties ?? {}) as Record<string, Schema>;
  for (const variable of CONFIG_VARIABLES) {
    const generated = configValueSchema(variable.form);
    if (generated !== undefined && variable.env in config) config[variable.env] = generated;
  }
  return copy;
}
