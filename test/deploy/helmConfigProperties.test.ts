/**
 * Random values for every variable of values.config: values.schema.json
 * takes one exactly when the service takes it as the ConfigMap renders it,
 * but for the known gaps (configGaps.ts), each of which must explain the
 * disagreement it is allowed. Values mix what each variable's form is made
 * of with Unicode white space, control characters, letters that fold or map
 * to ASCII and other numerals.
 *
 * The rendering is the tests' own (chart.ts configEnv), which
 * configRendering.test.ts holds to real renders of the chart, so a sample
 * costs microseconds instead of a helm-render run.
 */
import { Ajv } from "ajv";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { loadConfig, type ValueForm } from "../../src/config.js";
import { configEnv, envString, readSchema, readValues } from "./chart.js";
import { SERVICE_WHITESPACE } from "./configSchema.js";
import { formOf, lenientOthers, LOOSER_THAN_THE_SERVICE } from "./configGaps.js";

const configSchema = (readSchema().properties as Record<string, { properties: Record<string, object> }>).config!.properties;
const ajv = new Ajv({ strict: true, allowUnionTypes: true });

/** Characters the dialects, the trims or the service's parsers could read apart. */
const ODD = [
  ...SERVICE_WHITESPACE.map((code) => String.fromCodePoint(code)),
  "\u0085", "\u200b", "\u00ad", "\u0000", "\u0007", "\u001f", "\u007f", "\u009f",
  "\u212a", "\u017f", "\uff21", "\uff48", "\u0130", "é", "ß",
  "\u0663", "\uff15", "\u{1d7d8}", "\u00b2", "\u{1f600}",
];

const URL_PARTS = ["http://", "https://", "HTTP://", "hTTps://", "ftp://", "a", "example.com", ".", ":", "/", "8080", "99999", "[", "]", "::1", "@", "%", "%41", "?", "#", "-", "xn--bcher-kva"];

/** Fragments each text variable is made of. */
const TEXT_PARTS: Record<string, readonly string[]> = {
  ANTHROPIC_BASE_URL: URL_PARTS,
  OTEL_EXPORTER_OTLP_ENDPOINT: URL_PARTS,
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: URL_PARTS,
  COMPACTD_MODEL: ["claude", "-", "sonnet", "x".repeat(60), "/", ":", ".", "4"],
  COMPACTD_QUEUE_PREFIX: ["{", "}", "compactd", "t", ":", "-", "_"],
  COMPACTD_CALLBACK_ALLOW: ["hooks", "internal", ".", "*.", ",", ", ", "10.0.0.0", "10.1.2.3", "/8", "/33", "/016", "::", "fd00", "1", ":", "%eth0", "-", "xn--bcher-kva", "0"],
  OTEL_SERVICE_NAME: ["compactd", "-", "api", " "],
};

function fromParts(parts: readonly string[]): fc.Arbitrary<string> {
  return fc.array(fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...parts) }, { weight: 1, arbitrary: fc.constantFrom(...ODD) }), { maxLength: 8 }).map((chosen) => chosen.join(""));
}

function numeralParts(form: { max: number }, min: number): string[] {
  return ["0", "1", "5", "9", "00", String(min), String(form.max), String(form.max + 1), ".", ".5", "-", "+", "e", "1e3", "0x"];
}

/** Values of `env` as values.yaml or --set could give them. */
function valuesOf(env: string, form: ValueForm): fc.Arbitrary<unknown> {
  switch (form.kind) {
    case "integer":
      return fc.oneof(
        fromParts(numeralParts(form, form.min)),
        fc.integer({ min: form.min - 2, max: Math.min(form.max + 2, Number.MAX_SAFE_INTEGER) }),
        fc.double({ min: -1, max: form.max * 2, noNaN: true }),
      );
    case "decimal":
      return fc.oneof(
        fromParts(numeralParts(form, 0)),
        fc.double({ min: -1, max: form.max * 2, noNaN: true }),
        fc.double({ min: 0, max: 1e-4, noNaN: true }),
        fc.integer({ min: -2, max: form.max + 2 }),
      );
    case "choice":
      return fromParts([...form.values, ...form.values.map((value) => value.toUpperCase()), ...form.values.map((value) => value.slice(0, 2)), "k", "K", "s"]);
    case "flag":
      return fc.oneof(fromParts(["true", "false", "TRUE", "t", "rue", "F", "alse"]), fc.boolean(), fc.integer({ min: -1, max: 2 }));
    case "text": {
      const parts = TEXT_PARTS[env];
      if (parts === undefined) throw new Error(`${env}: give TEXT_PARTS the fragments its text is made of`);
      return fromParts(parts);
    }
  }
}

function serviceTakes(env: Record<string, string>): boolean {
  try {
    loadConfig({ ...env, REDIS_URL: "redis://redis:6379" });
    return true;
  } catch {
    return false;
  }
}

describe("values.schema.json against the service, on random values", () => {
  it.each(Object.keys(readValues().config as object))("takes a random %s exactly when the service takes it as rendered", (env) => {
    const schema = configSchema[env];
    expect(schema, `values.schema.json has no config.${env}`).toBeDefined();
    const validate = ajv.compile(schema!);
    const others = lenientOthers(env);
    const gap = LOOSER_THAN_THE_SERVICE[env];
    fc.assert(
      fc.property(valuesOf(env, formOf(env)), (value) => {
        const chart = validate(value);
        const service = serviceTakes({ ...others, ...configEnv({ config: { [env]: value } }) });
        return chart === service || (chart && gap !== undefined && gap.explains(envString(value)));
      }),
      { numRuns: 300 },
    );
  });
});
