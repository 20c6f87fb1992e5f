/**
 * The Helm chart's files as the deploy tests read them.
 */
import { readdirSync, readFileSync } from "node:fs";
import { Ajv } from "ajv";
import { parse, parseAllDocuments } from "yaml";
import { PLACEHOLDER, segments, yamlView } from "./goTemplate.js";

export const ROOT = new URL("../../", import.meta.url);
export const CHART = new URL("helm/compactd/", ROOT);
export const TEMPLATES = new URL("templates/", CHART);

export function readChartFile(path: string): string {
  return readFileSync(new URL(path, CHART), "utf8");
}

/** File names under templates/. */
export function templateFiles(): string[] {
  return readdirSync(TEMPLATES).sort();
}

/** Templates that render Kubernetes manifests (not helpers, not NOTES.txt). */
export function manifestTemplates(): string[] {
  return templateFiles().filter((file) => file.endsWith(".yaml"));
}

export function readTemplate(file: string): string {
  return readFileSync(new URL(file, TEMPLATES), "utf8");
}

export type Values = Record<string, unknown>;

export function readValues(): Values {
  return parse(readChartFile("values.yaml")) as Values;
}

export function readSchema(): Record<string, unknown> {
  return JSON.parse(readChartFile("values.schema.json")) as Record<string, unknown>;
}

/** values.schema.json as Helm applies it before rendering; `errors` says why values failed. */
export const validateValues = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true }).compile(readSchema());

/** A deep copy of the defaults with one change at `path` (dot-separated). */
export function changed(path: string, value: unknown): Values {
  const values = structuredClone(readValues());
  const keys = path.split(".");
  let node = values as Record<string, unknown>;
  for (const key of keys.slice(0, -1)) node = node[key] as Record<string, unknown>;
  node[keys.at(-1)!] = value;
  return values;
}

/**
 * A number with decimals in plain digits, as compactd.plainDecimal prints it:
 * the shortest digits that read back as the number (what Go's %v and
 * JavaScript's String print alike), with the exponent worked in.
 */
function plainDecimal(value: number): string {
  const [mantissa, exponent] = String(value).split("e-");
  if (exponent === undefined) return mantissa!;
  const [sign, digits] = mantissa!.startsWith("-") ? ["-", mantissa!.slice(1)] : ["", mantissa!];
  return `${sign}0.${"0".repeat(Number(exponent) - 1)}${digits.replace(".", "")}`;
}

/**
 * A value of values.config as the ConfigMap renders it (_helpers.tpl,
 * compactd.envString): whole numbers as integers, others in plain digits,
 * text trimmed as the service trims it. configRendering.test.ts holds it to
 * real renders.
 */
export function envString(value: unknown): string {
  if (typeof value === "string") return value.trim();
  return typeof value === "number" && !Number.isInteger(value) ? plainDecimal(value) : String(value);
}

/** values.config as the environment the ConfigMap gives the containers: a blank value is left out. */
export function configEnv(values: Values): Record<string, string> {
  const entries = Object.entries(values.config as Record<string, unknown>).map(([key, value]) => [key, envString(value)] as const);
  return Object.fromEntries(entries.filter(([, text]) => text !== ""));
}

/**
 * A manifest template's documents, parsed from its YAML view (actions
 * replaced by placeholders). If/else branches may repeat a key, so
 * duplicate keys are allowed; any other YAML error is thrown with the file.
 */
export function templateDocuments(file: string): unknown[] {
  const documents = parseAllDocuments(yamlView(readTemplate(file)), { uniqueKeys: false });
  const list = Array.isArray(documents) ? documents : [documents];
  return list.map((document, index) => {
    const [error] = document.errors;
    if (error !== undefined) throw new Error(`${file}, document ${index + 1}: ${error.message}`);
    return document.toJS() as unknown;
  });
}

/** The body of a `define` in _helpers.tpl, e.g. the queue name. */
export function helperBody(name: string): string {
  const text = readTemplate("_helpers.tpl");
  const parts = segments(text);
  const start = parts.findIndex((part) => part.kind === "action" && part.body === `define "${name}"`);
  if (start < 0) throw new Error(`_helpers.tpl defines no "${name}"`);
  const next = parts[start + 1];
  const after = parts[start + 2];
  if (next?.kind !== "text" || after?.kind !== "action" || after.body !== "end") {
    throw new Error(`"${name}" is not a plain text define`);
  }
  return next.text.trim();
}

/**
 * The ScaledObject's Prometheus query: the printf format string in the
 * template, with each verb replaced by {@link PLACEHOLDER}.
 */
export function kedaPrometheusQuery(): string {
  const match = /query: \{\{ printf ("(?:[^"\\]|\\.)*")/.exec(readTemplate("worker-scaledobject.yaml"));
  if (match === null) throw new Error("worker-scaledobject.yaml has no printf'd query");
  const format = JSON.parse(match[1]!) as string;
  return format.replace(/%s/g, PLACEHOLDER).replace(/%q/g, `"${PLACEHOLDER}"`);
}

/** The job states the ScaledObject's Redis triggers name, in order. */
export function kedaRedisStates(): string[] {
  const match = /range \$state := list ((?:"[^"]+"\s*)+)/.exec(readTemplate("worker-scaledobject.yaml"));
  if (match === null) throw new Error("worker-scaledobject.yaml has no Redis trigger per state");
  return [...match[1]!.matchAll(/"([^"]+)"/g)].map((state) => state[1]!);
}

export interface DashboardQuery {
  readonly where: string;
  readonly expr: string;
}

export interface Panel {
  readonly id: number;
  readonly type: string;
  readonly title: string;
  readonly datasource?: { readonly type: string; readonly uid: string };
  readonly targets?: readonly { readonly expr: string; readonly datasource?: { readonly uid: string } }[];
}

export interface Dashboard {
  readonly title: string;
  readonly uid: string;
  readonly panels: readonly Panel[];
  readonly templating: { readonly list: readonly { readonly name: string; readonly type: string; readonly query: unknown }[] };
}

export function readDashboard(): Dashboard {
  return JSON.parse(readChartFile("dashboards/compactd.json")) as Dashboard;
}

/** Every PromQL expression of the dashboard: panel targets and variable queries (`label_values(selector, label)` → selector). */
export function dashboardQueries(dashboard: Dashboard): DashboardQuery[] {
  const targets = dashboard.panels.flatMap((panel) =>
    (panel.targets ?? []).map((target) => ({ where: `panel "${panel.title}"`, expr: target.expr })),
  );
  const variables = dashboard.templating.list.flatMap((variable) => {
    if (variable.type !== "query") return [];
    const query = (variable.query as { query: string }).query;
    const selector = /^label_values\((.*),\s*\w+\)$/.exec(query)?.[1];
    if (selector === undefined) throw new Error(`variable ${variable.name}: expected label_values(selector, label), got ${query}`);
    return [{ where: `variable ${variable.name}`, expr: selector }];
  });
  return [...targets, ...variables];
}
