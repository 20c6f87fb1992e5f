/**
 * What the service reads from the chart's ConfigMap, rendered as Helm renders
 * it (helm-render: Go templates and sprig): the chart trims a value as the
 * service does. The tests' own rendering (chart.ts, configEnv) is held to
 * these real renders, so the property and bound tests may use it.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CONFIG_VARIABLES, loadConfig } from "../../src/config.js";
import { changed, configEnv, readTemplate, readValues, ROOT, validateValues } from "./chart.js";
import { SERVICE_WHITESPACE } from "./configSchema.js";
import { renderChart } from "./helmRender.js";

const scratch = mkdtempSync(path.join(tmpdir(), "compactd-config-render-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** JSON (and so YAML) text with every character outside printable ASCII escaped, which any YAML reader decodes alike. */
function asciiJson(value: unknown): string {
  return JSON.stringify(value).replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

let files = 0;

/** The ConfigMap's data with `values` (YAML text, or a `config` map) given in a values file, as `-f` gives it, and `sets` as `--set`. */
async function renderedConfig(values: string | Record<string, unknown>, sets: Record<string, string> = {}): Promise<Record<string, string>> {
  const file = path.join(scratch, `values-${files++}.yaml`);
  writeFileSync(file, typeof values === "string" ? values : asciiJson({ config: values }));
  const manifests = await renderChart(sets, [file]);
  const configMap = manifests.find((manifest) => manifest.kind === "ConfigMap" && !String((manifest.metadata as { name: string }).name).includes("dashboard"));
  if (configMap === undefined) throw new Error("the chart renders no ConfigMap");
  return (configMap as { data?: Record<string, string> }).data ?? {};
}

/** The cut set of compactd.trim in _helpers.tpl, decoded. */
function chartTrimSet(): number[] {
  const literal = /trimAll ("(?:[^"\\]|\\.)*")/.exec(readTemplate("_helpers.tpl"))?.[1];
  if (literal === undefined) throw new Error("_helpers.tpl has no trimAll");
  return [...(JSON.parse(literal) as string)].map((c) => c.codePointAt(0)!);
}

/** Config keys the chart only passes on (no arithmetic on them), to carry one padding each. */
const PASSED_ON = Object.keys(readValues().config as object).filter((key) => !["COMPACTD_QUEUE_SHARDS", "COMPACTD_SHUTDOWN_TIMEOUT_MS"].includes(key));

describe("the chart's ConfigMap, as the service reads it", () => {
  it("trims by name the white space the service trims", () => {
    expect(chartTrimSet()).toEqual(SERVICE_WHITESPACE);
  });

  it("lists in docs/DEPLOY.md the white space it trims beyond ASCII", () => {
    const deploy = readFileSync(new URL("docs/DEPLOY.md", ROOT), "utf8");
    const list = /\*\*White space\*\*([\s\S]*?)The chart trims/.exec(deploy)?.[1];
    if (list === undefined) throw new Error("docs/DEPLOY.md has no **White space** item");
    const listed = [...list.matchAll(/U\+([0-9A-F]{4})(?:–U\+([0-9A-F]{4}))?/g)].flatMap(([, from, to]) => {
      const [first, last] = [parseInt(from!, 16), parseInt(to ?? from!, 16)];
      return Array.from({ length: last - first + 1 }, (_, index) => first + index);
    });
    expect(listed.sort((a, b) => a - b)).toEqual(SERVICE_WHITESPACE.filter((code) => code > 0x7f));
  });

  it("renders each value trimmed as the service trims it, leaving out what is blank to the service", async () => {
    const paddings = [...SERVICE_WHITESPACE.map((code) => String.fromCodePoint(code)), "\u0085", "\u200b", "\u0085 "];
    expect(PASSED_ON.length).toBeGreaterThanOrEqual(paddings.length + 2);
    const config: Record<string, string> = {};
    paddings.forEach((pad, index) => (config[PASSED_ON[index]!] = `${pad}v${index}${pad}`));
    config[PASSED_ON[paddings.length]!] = "\ufeff \u3000";
    config[PASSED_ON[paddings.length + 1]!] = "\u0085";
    const rendered = await renderedConfig(config);
    const expected = Object.fromEntries(
      Object.entries(config)
        .map(([key, value]) => [key, value.trim()] as const)
        .filter(([, value]) => value !== ""),
    );
    for (const [key, value] of Object.entries(expected)) expect(rendered[key], key).toBe(value);
    expect(PASSED_ON.filter((key) => key in config && !(key in expected)).map((key) => key in rendered)).toEqual([false]);
    expect(configEnv({ config })).toEqual(Object.fromEntries(Object.entries(rendered).filter(([key]) => key in config)));
  });
});

/** Whether the service starts with `env`=`text` and its other variables at their defaults. */
function serviceTakes(env: string, text: string | undefined): boolean {
  try {
    loadConfig({ REDIS_URL: "redis://redis:6379", ...(text === undefined ? {} : { [env]: text }) });
    return true;
  } catch {
    return false;
  }
}

const DECIMAL = CONFIG_VARIABLES.find((variable) => variable.form.kind === "decimal")!.env;

/**
 * Numbers with decimals as a values file gives them (float64, which sprig's
 * toString prints in e-notation below 0.0001), around the bounds and far
 * below them.
 */
const DECIMALS = [1e-7, 0.0001, 0.00001234, 2.5e-5, 1.5e-10, 1e-300, 5e-324, 0.1, 0.25, 123.456, 719.9999999999, 720.5, -1e-7];

describe("numbers in the chart's ConfigMap", () => {
  it.each(DECIMALS)(`renders ${DECIMAL}: %s from a values file in plain digits that read back as the same number`, async (number) => {
    const text = (await renderedConfig({ [DECIMAL]: number }))[DECIMAL]!;
    expect(text).toMatch(/^-?[0-9]+(?:\.[0-9]+)?$/);
    expect(Number(text)).toBe(number);
    expect(configEnv({ config: { [DECIMAL]: number } })[DECIMAL]).toBe(text);
    expect(serviceTakes(DECIMAL, text)).toBe(validateValues(changed(`config.${DECIMAL}`, number)));
  });

  it("renders whole numbers a values file gives with a decimal point (float64) as integers", async () => {
    const rendered = await renderedConfig("config:\n  PORT: 8080.0\n  COMPACTD_INTAKE_THREAD_MIN_BYTES: 9007199254740991.0\n  " + DECIMAL + ": 720.0\n");
    expect([rendered.PORT, rendered.COMPACTD_INTAKE_THREAD_MIN_BYTES, rendered[DECIMAL]]).toEqual(["8080", "9007199254740991", "720"]);
  });

  it("renders numbers --set gives (a decimal stays a string there) as the service reads them", async () => {
    const rendered = await renderedConfig({}, { [`config.${DECIMAL}`]: "0.0000001", "config.PORT": "8081" });
    expect([rendered[DECIMAL], rendered.PORT]).toEqual(["0.0000001", "8081"]);
    expect(serviceTakes(DECIMAL, rendered[DECIMAL])).toBe(true);
  });
});
