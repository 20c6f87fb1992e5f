/**
 * Where values.schema.json and the service's configuration rules (src/config.ts)
 * part ways by design: rules between two variables, which no schema of one
 * value states, and text only the service's parsers can judge. The bound and
 * property tests allow these and nothing else, and check each is still a gap.
 */
import { CONFIG_VARIABLES, type ValueForm } from "../../src/config.js";
import { parseUrl } from "../../src/http/parseUrl.js";
import { allowEntryProblem } from "../../src/webhooks/callbackAllow.js";

export function formOf(env: string): ValueForm {
  const variable = CONFIG_VARIABLES.find((v) => v.env === env);
  if (variable === undefined) throw new Error(`${env} is not a config variable`);
  return variable.form;
}

/** The value a form's bound allows at its `end`: what makes a rule across variables leave the other one alone. */
export function extreme(env: string, end: "min" | "max"): string {
  const form = formOf(env);
  if (form.kind !== "integer") throw new Error(`${env} has no integer bounds`);
  return String(form[end]);
}

/**
 * Rules between two variables, which no schema of one value can state:
 * loadConfig alone enforces them, and values.yaml's comment of the variable
 * names the other. Each variable is probed with `other` at the end of its
 * range (`lenient`) where the rule leaves the variable's own bounds the whole
 * story.
 */
export const ACROSS_VARIABLES = [
  {
    env: "COMPACTD_JOB_ATTEMPTS",
    other: "COMPACTD_JOB_BACKOFF_MS",
    lenient: "min",
    reason: "the last retry waits the backoff doubled per attempt, which must stay within a day",
  },
  {
    env: "COMPACTD_JOB_BACKOFF_MS",
    other: "COMPACTD_JOB_ATTEMPTS",
    lenient: "min",
    reason: "the last retry waits the backoff doubled per attempt, which must stay within a day",
  },
  {
    env: "COMPACTD_CALLBACK_BACKOFF_MS",
    other: "COMPACTD_CALLBACK_MAX_BACKOFF_MS",
    lenient: "max",
    reason: "the longest delay between callback attempts is at least the first",
  },
  {
    env: "COMPACTD_CALLBACK_MAX_BACKOFF_MS",
    other: "COMPACTD_CALLBACK_BACKOFF_MS",
    lenient: "min",
    reason: "the longest delay between callback attempts is at least the first",
  },
] as const;

interface Gap {
  /** A value that shows the gap. */
  readonly value: string;
  readonly reason: string;
  /** Whether the gap is why the service refuses `text` (as the ConfigMap renders it) that the schema took. */
  readonly explains: (text: string) => boolean;
}

const URL_PARSER_REFUSES: Omit<Gap, "value"> = {
  reason: "a host (or port) the WHATWG URL parser refuses",
  explains: (text) => parseUrl(text.trim()) === undefined,
};

/**
 * Text the schema's pattern takes and the service still refuses: what only
 * its parser can tell. Each is a known gap, checked to be one.
 */
export const LOOSER_THAN_THE_SERVICE: Readonly<Record<string, Gap>> = {
  ANTHROPIC_BASE_URL: { value: "http://[", ...URL_PARSER_REFUSES },
  OTEL_EXPORTER_OTLP_ENDPOINT: { value: "https://host:99999", ...URL_PARSER_REFUSES },
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: { value: "http://[", ...URL_PARSER_REFUSES },
  COMPACTD_CALLBACK_ALLOW: {
    value: "fd00:::1/64",
    reason: "an IPv6 address node:net finds malformed",
    explains: (text) =>
      text
        .split(",")
        .map((entry) => entry.trim())
        .some((entry) => entry.includes(":") && allowEntryProblem(entry) !== null),
  },
};

/** The other variables set so that a rule across variables leaves `env`'s own bounds the whole story. */
export function lenientOthers(env: string): Record<string, string> {
  const rules = ACROSS_VARIABLES.filter((rule) => rule.env === env);
  return Object.fromEntries(rules.map((rule) => [rule.other, extreme(rule.other, rule.lenient)]));
}

