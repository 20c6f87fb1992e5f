/**
 * The chart's alert rules, rendered the way `helm template` renders them,
 * checked by Prometheus's own promtool: `check rules` on the rule file, and
 * `test rules` with a unit test per alert and condition, each firing on the
 * condition it names and staying silent on a healthy or merely noisy one.
 *
 * Input series are written as the service exports them: every label set
 * starts at 0 when a pod starts (metrics.ts exports them so), and the API
 * exports the queue gauge and a zero queue-wait histogram even with no worker.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { stringify } from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { renderChart, renderRuleGroups, TEST_RUNBOOK_BASE_URL, type RuleGroup } from "./helmRender.js";
import { promtool } from "./promtool.js";

/** The labels the chart's ServiceMonitors and the Operator put on the default release's series. */
const TARGET = 'namespace="compactd", release="compactd"';

function series(name: string, labels: string, values: string): { series: string; values: string } {
  return { series: `${name}{${[TARGET, labels].filter((part) => part !== "").join(", ")}}`, values };
}

const jobs = (reason: string, outcome: string, values: string) => series("compactd_jobs_total", `reason="${reason}", outcome="${outcome}"`, values);
const queued = (values: string) => series("compactd_queue_jobs", 'queue="compactions", state="prioritized"', values);
const callbacks = (outcome: string, values: string) => series("compactd_callbacks_total", `outcome="${outcome}"`, values);
const overflowLatency = (withinBound: string, all: string) => [
  series("compactd_job_latency_seconds_bucket", 'reason="overflow", le="60"', withinBound),
  series("compactd_job_latency_seconds_count", 'reason="overflow"', all),
];
const up = (component: string, values: string) => series("up", `component="${component}"`, values);
const queueWaitCount = (values: string) => series("compactd_queue_wait_seconds_count", 'reason="threshold"', values);

/** Which rendering of the chart a case runs against. */
type Variant = "default" | "kedaScaleToZero";

const VARIANT_VALUES: Record<Variant, Record<string, string | number | boolean>> = {
  default: {},
  kedaScaleToZero: { "keda.enabled": true, "worker.autoscaling.minReplicas": 0 },
};

interface AlertCase {
  readonly alert: string;
  readonly condition: string;
  readonly variant?: Variant;
  readonly fires: boolean;
  readonly evalTime: string;
  /** Between samples and between rule evaluations; the 6-hour windows use 5 minutes to keep promtool quick. */
  readonly interval?: "1m" | "5m";
  readonly series: readonly { series: string; values: string }[];
}

/** Series of samples at the case's interval; `a+bxN` is a, a+b, … N+1 samples (promtool's notation). */
const CASES: readonly AlertCase[] = [
  {
    alert: "CompactdDegradedRatioHigh",
    condition: "a fifth of finished compactions degraded for half an hour",
    fires: true,
    evalTime: "35m",
    series: [jobs("threshold", "completed", "0+8x40"), jobs("threshold", "degraded", "0+2x40")],
  },
  {
    alert: "CompactdDegradedRatioHigh",
    condition: "one in twenty degraded",
    fires: false,
    evalTime: "35m",
    series: [jobs("threshold", "completed", "0+19x40"), jobs("threshold", "degraded", "0+1x40")],
  },
  {
    alert: "CompactdQueueBacklogGrowing",
    condition: "a backlog over 100 that keeps growing",
    fires: true,
    evalTime: "35m",
    series: [queued("100+5x40")],
  },
  { alert: "CompactdQueueBacklogGrowing", condition: "a large backlog that does not grow", fires: false, evalTime: "35m", series: [queued("300x40")] },
  { alert: "CompactdQueueBacklogGrowing", condition: "a small backlog that grows", fires: false, evalTime: "35m", series: [queued("0+2x40")] },
  { alert: "CompactdBacklogNearLimit", condition: "8500 of 10000 queued for 10 minutes", fires: true, evalTime: "10m", series: [queued("8500x20")] },
  { alert: "CompactdBacklogNearLimit", condition: "7000 of 10000 queued", fires: false, evalTime: "10m", series: [queued("7000x20")] },
  {
    alert: "CompactdJobsFailing",
    condition: "the first failures of a fresh pod: six of six jobs failed",
    fires: true,
    evalTime: "12m",
    series: [jobs("threshold", "failed", "0+1x6 6x30"), jobs("threshold", "completed", "0x36"), jobs("threshold", "degraded", "0x36")],
  },
  {
    alert: "CompactdJobsFailing",
    condition: "jobs whose record Redis lost failing, counted under reason unknown, while the rest complete",
    fires: true,
    evalTime: "30m",
    series: [jobs("unknown", "failed", "0+1x40"), jobs("threshold", "failed", "0x40"), jobs("threshold", "completed", "0+9x40"), jobs("threshold", "degraded", "0x40")],
  },
  {
    alert: "CompactdJobsFailing",
    condition: "one failure in a hundred",
    fires: false,
    evalTime: "30m",
    series: [jobs("threshold", "failed", "0+1x40"), jobs("threshold", "completed", "0+99x40"), jobs("threshold", "degraded", "0x40")],
  },
  {
    alert: "CompactdJobsStalling",
    condition: "a job stalling every minute",
    fires: true,
    evalTime: "10m",
    series: [series("compactd_stalled_jobs_total", "", "0+1x10")],
  },
  {
    alert: "CompactdJobsStalling",
    condition: "two stalls in a quarter hour",
    fires: false,
    evalTime: "10m",
    series: [series("compactd_stalled_jobs_total", "", "0+1x2 2x10")],
  },
  {
    alert: "CompactdCallbacksFailing",
    condition: "half the callback attempts rejected",
    fires: true,
    evalTime: "35m",
    series: [callbacks("delivered", "0+5x40"), callbacks("rejected", "0+5x40"), callbacks("abandoned", "0x40")],
  },
  {
    alert: "CompactdCallbacksFailing",
    condition: "one attempt in twenty rejected, retried and delivered",
    fires: false,
    evalTime: "35m",
    series: [callbacks("delivered", "0+19x40"), callbacks("rejected", "0+1x40"), callbacks("abandoned", "0x40")],
  },
  {
    alert: "CompactdCallbacksAbandoned",
    condition: "the first callback a fresh pod gave up",
    fires: true,
    evalTime: "20m",
    series: [callbacks("abandoned", "0x5 1x30")],
  },
  { alert: "CompactdCallbacksAbandoned", condition: "no callback given up", fires: false, evalTime: "20m", series: [callbacks("abandoned", "0x30")] },
  {
    alert: "CompactdNoWorkerConsuming",
    condition: "no worker, jobs queued (KEDA may scale to zero; only the API exports the queue)",
    variant: "kedaScaleToZero",
    fires: true,
    evalTime: "20m",
    series: [queued("5x30"), queueWaitCount("0x30"), up("api", "1x30")],
  },
  {
    alert: "CompactdNoWorkerConsuming",
    condition: "no worker and nothing queued (KEDA scaled to zero, as it should)",
    variant: "kedaScaleToZero",
    fires: false,
    evalTime: "20m",
    series: [queued("0x30"), queueWaitCount("0x30"), up("api", "1x30")],
  },
  {
    alert: "CompactdNoWorkerConsuming",
    condition: "no worker up at all, whatever is queued",
    fires: true,
    evalTime: "20m",
    series: [queued("0x30"), queueWaitCount("0x30"), up("api", "1x30"), up("worker", "0x30")],
  },
  {
    alert: "CompactdNoWorkerConsuming",
    condition: "a worker up and taking the queued jobs",
    fires: false,
    evalTime: "20m",
    series: [queued("5x30"), queueWaitCount("0+1x30"), up("api", "1x30"), up("worker", "1x30")],
  },
  {
    alert: "CompactdSummaryBudgetBurnFast",
    condition: "nine in ten compactions degraded for an hour and still now",
    fires: true,
    evalTime: "70m",
    series: [jobs("threshold", "completed", "0+1x90"), jobs("threshold", "degraded", "0+9x90")],
  },
  {
    alert: "CompactdSummaryBudgetBurnFast",
    condition: "an hour of degraded compactions that ended ten minutes ago",
    fires: false,
    evalTime: "70m",
    series: [jobs("threshold", "completed", "0+1x60 60+10x30"), jobs("threshold", "degraded", "0+9x60 540x30")],
  },
  {
    alert: "CompactdSummaryBudgetBurnFast",
    condition: "half of the compactions degraded (a slow burn, not a fast one)",
    fires: false,
    evalTime: "70m",
    series: [jobs("threshold", "completed", "0+5x90"), jobs("threshold", "degraded", "0+5x90")],
  },
  {
    alert: "CompactdSummaryBudgetBurnSlow",
    condition: "four in ten degraded for seven hours",
    fires: true,
    evalTime: "400m",
    interval: "5m",
    series: [jobs("overflow", "completed", "0+30x84"), jobs("overflow", "degraded", "0+20x84")],
  },
  {
    alert: "CompactdSummaryBudgetBurnSlow",
    condition: "two in ten degraded",
    fires: false,
    evalTime: "400m",
    interval: "5m",
    series: [jobs("overflow", "completed", "0+40x84"), jobs("overflow", "degraded", "0+10x84")],
  },
  {
    alert: "CompactdOverflowLatencyBudgetBurnFast",
    condition: "half the overflow compactions slower than the bound",
    fires: true,
    evalTime: "70m",
    series: overflowLatency("0+5x90", "0+10x90"),
  },
  {
    alert: "CompactdOverflowLatencyBudgetBurnFast",
    condition: "one overflow compaction in a hundred slower than the bound",
    fires: false,
    evalTime: "70m",
    series: overflowLatency("0+99x90", "0+100x90"),
  },
  {
    alert: "CompactdOverflowLatencyBudgetBurnSlow",
    condition: "one in ten slower than the bound for seven hours",
    fires: true,
    evalTime: "400m",
    interval: "5m",
    series: overflowLatency("0+45x84", "0+50x84"),
  },
  {
    alert: "CompactdOverflowLatencyBudgetBurnSlow",
    condition: "three in a hundred slower than the bound",
    fires: false,
    evalTime: "400m",
    interval: "5m",
    series: overflowLatency("0+97x84", "0+100x84"),
  },
];

const dir = mkdtempSync(path.join(tmpdir(), "compactd-rules-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const rendered = new Map<Variant, RuleGroup[]>();
beforeAll(async () => {
  for (const variant of Object.keys(VARIANT_VALUES) as Variant[]) rendered.set(variant, await renderRuleGroups(VARIANT_VALUES[variant]));
});

function severityOf(groups: readonly RuleGroup[], alert: string): string {
  const rule = groups.flatMap((group) => group.rules).find((candidate) => candidate.alert === alert);
  if (rule?.labels?.severity === undefined) throw new Error(`no alert ${alert} with a severity`);
  return rule.labels.severity;
}

/**
 * Runs the cases of one variant with `promtool test rules`. Annotations are
 * left out of the rule file under test: promtool would compare their rendered
 * text, which says nothing about when an alert fires (`check rules` reads them).
 */
async function testRules(variant: Variant, interval: string, cases: readonly AlertCase[]): Promise<string> {
  if (cases.length === 0) return "";
  const groups = rendered.get(variant)!;
  const rulesFile = path.join(dir, `${variant}.rules.yaml`);
  const testsFile = path.join(dir, `${variant}-${interval}.test.yaml`);
  const bare = groups.map((group) => ({ ...group, rules: group.rules.map(({ annotations: _annotations, ...rule }) => rule) }));
  writeFileSync(rulesFile, stringify({ groups: bare }));
  const tests = cases.map((alertCase) => ({
    name: `${alertCase.alert}: ${alertCase.condition}`,
    interval,
    input_series: alertCase.series,
    alert_rule_test: [
      {
        eval_time: alertCase.evalTime,
        alertname: alertCase.alert,
        exp_alerts: alertCase.fires ? [{ exp_labels: { severity: severityOf(groups, alertCase.alert) } }] : [],
      },
    ],
  }));
  writeFileSync(testsFile, stringify({ rule_files: [rulesFile], evaluation_interval: interval, tests }));
  const run = await promtool(["test", "rules", testsFile]);
  return run.code === 0 ? "" : run.output;
}

describe("the chart's alert rules under promtool", () => {
  it.each(Object.keys(VARIANT_VALUES) as Variant[])("pass `promtool check rules` as rendered (%s values)", async (variant) => {
    const file = path.join(dir, `${variant}.check.yaml`);
    writeFileSync(file, stringify({ groups: rendered.get(variant) }));
    const run = await promtool(["check", "rules", file]);
    expect(run.output).toContain("SUCCESS");
    expect(run.code).toBe(0);
  });

  it("each alert fires on its condition and stays silent otherwise (promtool test rules)", async () => {
    const failures: string[] = [];
    for (const variant of Object.keys(VARIANT_VALUES) as Variant[]) {
      for (const interval of ["1m", "5m"]) {
        const cases = CASES.filter((c) => (c.variant ?? "default") === variant && (c.interval ?? "1m") === interval);
        failures.push(await testRules(variant, interval, cases));
      }
    }
    expect(failures.join("")).toBe("");
  }, 180_000);

  it("has a firing and a silent case for every alert the chart installs", () => {
    const alerts = new Set([...rendered.values()].flatMap((groups) => groups.flatMap((group) => group.rules.map((rule) => rule.alert))));
    const uncovered = [...alerts].flatMap((alert) =>
      [true, false].filter((fires) => !CASES.some((c) => c.alert === alert && c.fires === fires)).map((fires) => `${alert} (${fires ? "firing" : "silent"})`),
    );
    expect(uncovered).toEqual([]);
    expect(alerts.size).toBeGreaterThanOrEqual(12);
  });

  it("catches a rule that does not fire: the same cases fail against a threshold no ratio reaches", async () => {
    const groups = rendered.get("default")!;
    const broken = groups.map((group) => ({
      ...group,
      rules: group.rules.map((rule) => (rule.alert === "CompactdJobsFailing" ? { ...rule, expr: rule.expr.replace(/> [\d.]+\s*$/, "> 2") } : rule)),
    }));
    rendered.set("default", broken);
    try {
      expect(await testRules("default", "1m", CASES.filter((c) => c.alert === "CompactdJobsFailing"))).toContain("CompactdJobsFailing");
    } finally {
      rendered.set("default", groups);
    }
  });

  it("links every alert to its runbook section in the operator's copy of docs/OPERATIONS.md", () => {
    const rules = rendered.get("default")!.flatMap((group) => group.rules);
    const wrong = rules.filter((rule) => rule.annotations?.runbook_url !== `${TEST_RUNBOOK_BASE_URL}#${rule.alert.toLowerCase()}`);
    expect(wrong.map((rule) => rule.alert)).toEqual([]);
  });

  it("refuses to install alerts without a runbook URL, naming the value to set", async () => {
    const refused = renderChart({ "metrics.prometheusRule.enabled": true });
    await expect(refused).rejects.toThrow(/metrics\.prometheusRule\.runbookBaseUrl is required/);
    // Without the rules, nothing asks for it.
    expect((await renderChart()).some((manifest) => manifest.kind === "PrometheusRule")).toBe(false);
  });
});
