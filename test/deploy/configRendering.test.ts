/**
 * What the service reads from the chart's ConfigMap, rendered as Helm renders
 * it (helm-render: Go templates and sprig): the chart trims a value as the
 * service does. The tests' own rendering (chart.ts, configEnv) is held to
 * these real renders, so the property and bound tests may use it.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { configEnv, readTemplate, readValues } from "./chart.js";
import { SERVICE_WHITESPACE } from "./configSchema.js";
import { renderChart } from "./helmRender.js";

const scratch = mkdtempSync(path.join(tmpdir(), "compactd-config-render-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** JSON (and so YAML) text with every character outside printable ASCII escaped, which any YAML reader decodes alike. */
function asciiJson(value: unknown): string {
  return JSON.stringify(value).replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

let files = 0;

/** The ConfigMap's data with `config` given in a values file (as `-f` gives it), and `sets` as `--set`. */
export async function renderedConfig(config: Record<string, unknown>, sets: Record<string, string> = {}): Promise<Record<string, string>> {
  const file = path.join(scratch, `values-${files++}.yaml`);
  writeFileSync(file, asciiJson({ config }));
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
