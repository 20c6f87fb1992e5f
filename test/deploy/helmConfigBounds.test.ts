/**
 * The chart refuses what the service refuses: for every variable of
 * values.config, values.schema.json accepts a value exactly when loadConfig
 * takes it from the ConfigMap. A value the schema lets through and the
 * service refuses passes `helm install` and then crash-loops every pod.
 *
 * Numbers are probed at the bounds src/config.ts declares (ValueForm), as
 * strings (values.yaml, `--set-string`) and as numbers (`--set`); choices
 * and flags with each value in other cases; text with a few values each.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { isMap, isScalar, parseDocument } from "yaml";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { changed, CHART, configEnv, readChartFile, readSchema, readValues, validateValues, type Values } from "./chart.js";
import { ACROSS_VARIABLES, extreme, formOf, lenientOthers, LOOSER_THAN_THE_SERVICE } from "./configGaps.js";
import { rangeAlternatives, schemaText, withGeneratedSchema } from "./configSchema.js";

const URLS = [
  "http://127.0.0.1:4010",
  " https://api.example.com/v1 ",
  "HTTPS://collector.monitoring:4318",
  "not a url",
  "ftp://example.com",
  "http://",
  "http://a b",
  "redis://redis:6379",
];

/** Probes of the variables whose text only the service's own code checks. */
const TEXT_PROBES: Record<string, readonly string[]> = {
  ANTHROPIC_BASE_URL: URLS,
  OTEL_EXPORTER_OTLP_ENDPOINT: URLS,
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: URLS,
  COMPACTD_MODEL: ["claude-sonnet-5-5", " anthropic/claude-3.5:beta ", "x".repeat(200), "x".repeat(201), "claude sonnet", "claude-\u0007"],
  COMPACTD_QUEUE_PREFIX: ["{compactd}", "compactd", "app:{t1}", " {t1} ", "a}b{c}d", "a{b}c{d}", "{compactd", "compactd}", "{}", "{a{b}", "a b", "{t1}\u0007", "{t\u0085}x"],
  COMPACTD_CALLBACK_ALLOW: [
    "127.0.0.1, 10.0.0.0/8, ::1, fd00::/8, hooks.internal, *.svc.cluster.local",
    "Hooks.Internal., 10.1.0.0/016, fe80::1%eth0, ::/0",
    " , 192.168.0.0/32 ,",
    "10.0.0.0/33",
    "fd00::/129",
    "bad_host!",
    "*.",
    "hooks internal",
    "10.0.0.1/8/8",
    "-host.internal",
    "\u212aube.internal",
    "hooks.\u017fvc",
    "xn--bcher-kva.corp",
    "hooks.internal\u00a0, 10.0.0.0/8",
    "hooks.internal\u0085",
  ],
  OTEL_SERVICE_NAME: ["compactd", "compactd api"],
};

/** Malformed numerals the service refuses whatever its bounds. */
const NOT_NUMERALS = ["1e3", "0x10", "+5", "-0", "5 5", "five", "1,000", ".5", "5."];

function bothForms(numbers: readonly number[]): unknown[] {
  return numbers.flatMap((n) => [n, String(n)]);
}

/** Values to try for `env`, from the bounds the service declares for it. */
function probes(env: string): unknown[] {
  const form = formOf(env);
  const blank = ["", "  "];
  switch (form.kind) {
    case "integer":
      return [
        ...bothForms([form.min - 1, form.min, form.min + 0.5, form.max - 1, form.max, form.max + 1, form.max + 0.5]),
        ` ${form.max} `,
        `00${form.min}`,
        `${form.max}.0`,
        ...blank,
        ...NOT_NUMERALS,
      ];
    case "decimal":
      return [
        ...bothForms([-1, 0, 1e-7, 0.25, 1, form.max - 0.5, form.max, form.max + 0.5, form.max + 1]),
        "0.0",
        "00.5",
        ` ${form.max}.000 `,
        `0${form.max}`,
        ...blank,
        ...NOT_NUMERALS,
      ];
    case "choice":
      return [...form.values.flatMap((value) => [value, value.toUpperCase(), ` ${value} `, `${value}x`]), ...blank, "x"];
    case "flag":
      return ["true", "false", "TRUE", " False ", true, false, ...blank, "yes", "1", 1, 0];
    case "text": {
      const values = TEXT_PROBES[env];
      if (values === undefined) throw new Error(`${env}: its text is checked by the service's code; give TEXT_PROBES a few values for it`);
      return [...values, ...blank];
    }
  }
}

/** The defaults with `env` set to `value` and `others` set as given. */
function valuesWith(env: string, value: unknown, others: Record<string, string> = {}): Values {
  const values = changed(`config.${env}`, value);
  Object.assign(values.config as object, others);
  return values;
}

function serviceTakes(values: Values): boolean {
  try {
    loadConfig({ ...configEnv(values), REDIS_URL: "redis://redis:6379" });
    return true;
  } catch {
    return false;
  }
}

/** How the chart and the service disagree on `env`=`value` (with `others` set), or undefined when they agree. */
function disagreement(env: string, value: unknown, others: Record<string, string> = {}): string | undefined {
  const values = valuesWith(env, value, others);
  const [chart, service] = [validateValues(values), serviceTakes(values)];
  if (chart === service) return undefined;
  return `${env}=${JSON.stringify(value)}: the chart ${chart ? "accepts" : "refuses"} it, the service ${service ? "takes" : "refuses"} it`;
}

function disagreements(env: string, others: Record<string, string>): string[] {
  return probes(env).flatMap((value) => disagreement(env, value, others) ?? []);
}

const configKeys = Object.keys(readValues().config as object);

describe("values.schema.json against the service's own configuration rules", () => {
  it.each(configKeys)("accepts %s exactly when the service does", (env) => {
    expect(disagreements(env, lenientOthers(env))).toEqual([]);
  });

  it.each(Object.entries(LOOSER_THAN_THE_SERVICE).map(([env, gap]) => [env, gap.value, gap.reason]))(
    "lets through %s=%s, %s",
    (env, value) => {
      expect(disagreement(env, value)).toBe(`${env}=${JSON.stringify(value)}: the chart accepts it, the service refuses it`);
      expect(LOOSER_THAN_THE_SERVICE[env]!.explains(value)).toBe(true);
    },
  );

  it.each(ACROSS_VARIABLES.map((rule) => [rule.env, rule.other, rule.reason, rule.lenient] as const))(
    "leaves %s against %s to the service (%s), as values.yaml says",
    (env, other, _reason, lenient) => {
      const strict = extreme(other, lenient === "min" ? "max" : "min");
      expect(disagreements(env, { [other]: strict }).some((entry) => entry.endsWith("the chart accepts it, the service refuses it"))).toBe(true);
      expect(commentOf(env)).toContain(other);
    },
  );

  it("states each generated bound as the service does (UPDATE_HELM_SCHEMA=1 rewrites it)", () => {
    const generated = schemaText(withGeneratedSchema(readSchema()));
    if (process.env.UPDATE_HELM_SCHEMA === "1") writeFileSync(new URL("values.schema.json", CHART), generated);
    expect(readChartFile("values.schema.json")).toBe(generated);
  });

  // Stricter than the service by choice, as docs/DEPLOY.md says: `--set config.COMPACTD_MODEL=4` gives
  // a number, which the service would read as "4", but a number's rendering (1e-300 in plain digits is
  // 300 of them) is no text rule's business; such text takes --set-string or quotes.
  it.each(configKeys.filter((env) => formOf(env).kind === "text"))("refuses %s given as a number: text is typed string", (env) => {
    expect(validateValues(valuesWith(env, 4))).toBe(false);
  });

  it("matches exactly the numerals of a range, as a pattern", () => {
    for (const [min, max] of [[0, 1000], [1, 9], [7, 613], [100, 1999], [10, 10]] as const) {
      const pattern = new RegExp(`^(?:${rangeAlternatives(min, max).join("|")})$`);
      for (let n = 0; n <= 2100; n++) expect(pattern.test(String(n)), `${n} in ${min}..${max}`).toBe(n >= min && n <= max);
    }
    const unbounded = new RegExp(`^(?:${rangeAlternatives(0, Number.MAX_SAFE_INTEGER).join("|")})$`);
    expect([String(Number.MAX_SAFE_INTEGER), "9007199254740992", "10000000000000000"].map((n) => unbounded.test(n))).toEqual([true, false, false]);
  });
});

/** The comment values.yaml writes above `config.<env>`. */
function commentOf(env: string): string {
  const config = parseDocument(readFileSync(new URL("values.yaml", CHART), "utf8")).get("config", true);
  if (!isMap(config)) throw new Error("values.yaml has no config map");
  const pair = config.items.find((item) => isScalar(item.key) && item.key.value === env);
  if (pair === undefined || !isScalar(pair.key)) throw new Error(`values.yaml has no config.${env}`);
  return pair.key.commentBefore ?? "";
}
