/**
 * The chart rendered the way `helm template` renders it, by the shared
 * `helm-render` tool (Go's text/template with sprig and Helm's own functions;
 * there is no helm binary on these machines). `.ci/run` builds it; set
 * HELM_RENDER to use another build.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { parseAllDocuments } from "yaml";
import { repoRoot } from "../helpers/repoRoot.js";

export const HELM_RENDER = process.env.HELM_RENDER ?? path.join(tmpdir(), "helm-render");

/** The manifests the chart renders with `--set` values and then values files (`-f`), as parsed YAML objects. */
export async function renderChart(
  sets: Readonly<Record<string, string | number | boolean>> = {},
  valuesFiles: readonly string[] = [],
): Promise<Record<string, unknown>[]> {
  if (!existsSync(HELM_RENDER)) {
    throw new Error(`no helm-render at ${HELM_RENDER}: build it with bash ../shared/tools/helm-render/build.sh ${HELM_RENDER}`);
  }
  const args = [
    path.join(repoRoot, "helm/compactd"),
    ...valuesFiles.flatMap((file) => ["-f", file]),
    ...Object.entries(sets).flatMap(([key, value]) => ["--set", `${key}=${String(value)}`]),
  ];
  const { stdout } = await promisify(execFile)(HELM_RENDER, args, { maxBuffer: 16 * 1024 * 1024 });
  return parseAllDocuments(stdout)
    .map((document) => document.toJS() as Record<string, unknown> | null)
    .filter((manifest): manifest is Record<string, unknown> => manifest !== null);
}

export interface AlertingRule {
  readonly alert: string;
  readonly expr: string;
  readonly for?: string;
  readonly labels?: Record<string, string>;
  readonly annotations?: Record<string, string>;
}

export interface RuleGroup {
  readonly name: string;
  readonly rules: readonly AlertingRule[];
}

/** Where the tests say their copy of docs/OPERATIONS.md is published, as an operator must (values.yaml). */
export const TEST_RUNBOOK_BASE_URL = "https://docs.example.com/compactd/docs/OPERATIONS.md";

/** The rule groups of the chart's PrometheusRule, as a Prometheus rule file holds them. */
export async function renderRuleGroups(sets: Readonly<Record<string, string | number | boolean>> = {}): Promise<RuleGroup[]> {
  const manifests = await renderChart({
    "metrics.prometheusRule.enabled": true,
    "metrics.prometheusRule.runbookBaseUrl": TEST_RUNBOOK_BASE_URL,
    ...sets,
  });
  const rule = manifests.find((manifest) => manifest.kind === "PrometheusRule") as { spec: { groups: RuleGroup[] } } | undefined;
  if (rule === undefined) throw new Error("the chart renders no PrometheusRule");
  return rule.spec.groups;
}

/** Every alert of the chart's PrometheusRule with its expression, as rendered with the default values. */
export async function ruleExpressions(): Promise<{ alert: string; expr: string }[]> {
  return (await renderRuleGroups()).flatMap((group) => group.rules.map(({ alert, expr }) => ({ alert, expr })));
}
