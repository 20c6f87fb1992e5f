/**
 * The dashboard and the alert rules against a real Prometheus scraping a
 * running API and worker, while jobs are driven through them with faults at
 * the stand-in Anthropic API and a receiver that refuses each callback once.
 *
 * First the API runs alone (the worker's port is scraped but dead): the
 * backlog must show, "Workers up" must read 0 and the no-worker alert's
 * expression must hold. Then the worker starts and drains the queue, and
 * every count Prometheus derives over the run must equal what was driven.
 */
import { Queue } from "bullmq";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runApi, type RunningApi } from "../../src/api/runApi.js";
import { createMetrics, type Metrics } from "../../src/metrics/metrics.js";
import { runWorker, type RunningWorker } from "../../src/worker/runWorker.js";
import { conversation, reactTurn } from "../helpers/conversations.js";
import { startFakeAnthropic, type FakeAnthropic } from "../helpers/fakeAnthropic.js";
import { markedRequest } from "../helpers/markedConversation.js";
import { COMPACTION_QUEUE } from "../../src/queue/queueNames.js";
import { deleteKeysUnder, TEST_REDIS_URL } from "../helpers/redisTestPrefix.js";
import type { Config } from "../../src/config.js";
import { bearer, serviceConfig } from "../helpers/serviceConfig.js";
import { waitUntil } from "../helpers/waitUntil.js";
import { startWebhookReceiver, type WebhookReceiver } from "../webhooks/webhookReceiver.js";
import { dashboardQueries, readDashboard } from "./chart.js";
import { renderRuleGroups, type AlertingRule } from "./helmRender.js";
import { freePort } from "../helpers/freePort.js";
import { startPrometheus, type RunningPrometheus } from "./prometheus.js";

/** What the test drives, by compaction reason and outcome. */
const DRIVEN = {
  threshold: { completed: 7, degraded: 3, cancelled: 2, nothing_to_compact: 1, failed: 0 },
  overflow: { completed: 2, degraded: 0, cancelled: 0, nothing_to_compact: 0, failed: 0 },
  manual: { completed: 0, degraded: 0, cancelled: 0, nothing_to_compact: 0, failed: 0 },
} as const;
const FINISHED = DRIVEN.threshold.completed + DRIVEN.threshold.degraded + DRIVEN.overflow.completed;
const QUEUED_BEFORE_WORKER = FINISHED;
/** Every completed job with a callback URL gets one refused attempt, then a delivered one. */
const WITH_CALLBACK = DRIVEN.threshold.completed;

/** The release labels the chart's ServiceMonitors add; the rendered rules select on them. */
const RELEASE = { namespace: "compactd", release: "compactd" };

/** Grafana's variables, as a user with this release selected would have them. */
function asGrafanaRuns(expr: string): string {
  return expr
    .replaceAll("$namespace", RELEASE.namespace)
    .replaceAll("$release", RELEASE.release)
    .replaceAll("$__rate_interval", "10m");
}

/** The whole run fits in this window; increase() over it counts the run. */
const RUN = "10m";
const SELECT = `namespace="${RELEASE.namespace}", release="${RELEASE.release}"`;

let fake: FakeAnthropic;
let receiver: WebhookReceiver;
let api: RunningApi;
let worker: RunningWorker | undefined;
let workerMetrics: Metrics;
let prometheus: RunningPrometheus;
let rules: AlertingRule[];
let config: Config;
const jobIds: string[] = [];

const single = async (expr: string, time?: number): Promise<number> => {
  const samples = await prometheus.query(expr, time);
  if (samples.length !== 1) throw new Error(`expected one sample, got ${samples.length}: ${expr}`);
  return samples[0]!.value;
};
const dashboardExpr = (title: string, index = 0): string => {
  const panel = readDashboard().panels.find((candidate) => candidate.title === title);
  const target = panel?.targets?.[index];
  if (target === undefined) throw new Error(`no panel "${title}" with a query ${index}`);
  return asGrafanaRuns(target.expr);
};
const alertExpr = (alert: string): string => {
  const rule = rules.find((candidate) => candidate.alert === alert);
  if (rule === undefined) throw new Error(`no alert ${alert}`);
  return rule.expr;
};
const post = async (path: string, body: unknown): Promise<{ status: number; body: Record<string, unknown> }> => {
  const response = await fetch(`http://127.0.0.1:${api.port}${path}`, {
    method: "POST",
    headers: { ...bearer("acme"), "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
};

beforeAll(async () => {
  rules = (await renderRuleGroups()).flatMap((group) => group.rules);
  fake = await startFakeAnthropic({
    script: (request) => (request.userText.includes("fault:overloaded ") ? { kind: "error", status: 529 } : { kind: "reply" }),
  });
  // Each callback's first attempt is refused, its retry delivered.
  const seen = new Set<string>();
  receiver = await startWebhookReceiver((_index, request) => {
    const id = String(request.headers["webhook-id"]);
    if (seen.has(id)) return { status: 204 };
    seen.add(id);
    return { status: 503 };
  });
  const workerPort = await freePort();
  config = {
    ...serviceConfig("prometheus-e2e", {
      ANTHROPIC_API_KEY: "sk-test",
      ANTHROPIC_BASE_URL: fake.url,
      COMPACTD_JOB_ATTEMPTS: "2",
      COMPACTD_CALLBACK_ALLOW: "127.0.0.1",
    }),
    metricsPort: workerPort,
  };
  api = await runApi(config, { logger: false }, "127.0.0.1");
  prometheus = await startPrometheus([
    { job: "compactd-api", address: `127.0.0.1:${api.port}`, labels: { ...RELEASE, component: "api" } },
    { job: "compactd-worker", address: `127.0.0.1:${workerPort}`, labels: { ...RELEASE, component: "worker" } },
  ]);
  workerMetrics = createMetrics();
  // Counters count from a pod's first scrape on: drive nothing before it.
  await waitUntil(async () => (await prometheus.query("up")).length === 2, "Prometheus scraped both targets once", 30_000);
}, 120_000);

afterAll(async () => {
  await worker?.close();
  await api?.close();
  await prometheus?.close();
  await fake?.close();
  await receiver?.stop();
  if (config !== undefined) await deleteKeysUnder(config.queuePrefix);
});

describe("the dashboard and the alerts on a real Prometheus", () => {
  it("with no worker running: shows the backlog, 0 workers up, and the no-worker alert's condition", async () => {
    const submit = async (marker: string, extra: Record<string, unknown>): Promise<string> => {
      const { status, body } = await post("/v1/compactions", markedRequest(marker, { reason: "threshold", ...extra }));
      expect(status).toBe(202);
      return String(body.id);
    };
    for (let i = 0; i < DRIVEN.threshold.completed; i++) jobIds.push(await submit(`ok-${i}`, { callbackUrl: receiver.url() }));
    for (let i = 0; i < DRIVEN.threshold.degraded; i++) jobIds.push(await submit(`fault:overloaded ${i}`, {}));
    for (let i = 0; i < DRIVEN.overflow.completed; i++) jobIds.push(await submit(`overflow-${i}`, { reason: "overflow" }));
    for (let i = 0; i < DRIVEN.threshold.cancelled; i++) {
      const id = await submit(`cancel-${i}`, {});
      const cancelled = await fetch(`http://127.0.0.1:${api.port}/v1/compactions/${id}`, { method: "DELETE", headers: bearer("acme") });
      expect(cancelled.status).toBeLessThan(300);
    }
    const small = conversation(reactTurn({ rounds: 1, toolResultChars: 10 }));
    for (let i = 0; i < DRIVEN.threshold.nothing_to_compact; i++) {
      expect((await post("/v1/compactions", { messages: small, contextWindow: 200_000, reason: "threshold" })).status).toBe(200);
    }

    await waitUntil(
      async () => (await prometheus.query(dashboardExpr("Queued compactions")))[0]?.value === QUEUED_BEFORE_WORKER,
      "Prometheus sees the backlog",
      60_000,
    );
    expect(await single(dashboardExpr("Workers up"))).toBe(0);
    expect((await prometheus.query(alertExpr("CompactdNoWorkerConsuming"))).length).toBe(1);
  }, 120_000);

  it("after the worker drained the queue: every count over the run equals what was driven", async () => {
    // rate() and increase() see only what happens after a pod's first scrape
    // (OPERATIONS.md says so): hold the queue until Prometheus has scraped
    // the new worker's zeros, as it would a pod that starts before the load.
    const queue = new Queue(COMPACTION_QUEUE, { connection: { url: TEST_REDIS_URL }, prefix: config.queuePrefix });
    await queue.pause();
    worker = await runWorker(config, { metrics: workerMetrics, onError: () => {} });
    await waitUntil(async () => (await single(dashboardExpr("Workers up"))) === 1, "Prometheus scraped the worker", 30_000);
    await queue.resume();
    await queue.close();
    for (const id of jobIds) {
      await waitUntil(
        async () => {
          const response = await fetch(`http://127.0.0.1:${api.port}/v1/compactions/${id}?wait=5`, { headers: bearer("acme") });
          return ["completed", "failed"].includes(String(((await response.json()) as { status: string }).status));
        },
        `job ${id} finishes`,
        90_000,
      );
    }
    await waitUntil(
      async () => receiver.received.length >= 2 * WITH_CALLBACK,
      "every callback delivered on its retry",
      60_000,
    );
    expect(receiver.received.length).toBe(2 * WITH_CALLBACK);
    expect(new Set(receiver.received.map((callback) => callback.headers["webhook-id"])).size).toBe(WITH_CALLBACK);
    // Two scrapes after the last event settle the final values.
    const total = Object.values(DRIVEN)
      .flatMap((byOutcome) => Object.values(byOutcome) as number[])
      .reduce((a, b) => a + b, 0);
    await waitUntil(
      async () =>
        (await single(`sum(compactd_jobs_total{${SELECT}})`)) === total &&
        (await single(`sum(compactd_callbacks_total{${SELECT}, outcome="delivered"})`)) === WITH_CALLBACK,
      "Prometheus scraped the final counts",
      30_000,
    );
    // Evaluated at the worker's last scrape: increase() extrapolates a series
    // to the end of its window, by up to a scrape interval, which on a
    // worker that lived seconds would add several per cent.
    const at = await single(`max(timestamp(up{${SELECT}, component="worker"}))`);

    const counted = await prometheus.query(`sum by (reason, outcome) (increase(compactd_jobs_total{${SELECT}}[${RUN}]))`, at);
    const byKey = new Map(counted.map((sample) => [`${sample.metric.reason}/${sample.metric.outcome}`, Math.round(sample.value)]));
    for (const [reason, outcomes] of Object.entries(DRIVEN)) {
      for (const [outcome, count] of Object.entries(outcomes) as [string, number][]) {
        expect(byKey.get(`${reason}/${outcome}`), `${reason}/${outcome}`).toBe(count);
      }
    }

    const throughput = await prometheus.query(dashboardExpr("Throughput by outcome"), at);
    const perSecond = (outcome: string) => throughput.find((sample) => sample.metric.outcome === outcome)?.value ?? Number.NaN;
    // rate() is increase() over the window's seconds: the same counts, scaled.
    expect(Math.round(perSecond("completed") * 600)).toBe(DRIVEN.threshold.completed + DRIVEN.overflow.completed);
    expect(Math.round(perSecond("degraded") * 600)).toBe(DRIVEN.threshold.degraded);
    expect(Math.round(perSecond("failed") * 600)).toBe(0);

    const degradedShare = DRIVEN.threshold.degraded / FINISHED;
    expect(await single(dashboardExpr("Degraded (1h)"), at)).toBeCloseTo(degradedShare, 2);
    expect(await single(dashboardExpr("Degraded ratio"), at)).toBeCloseTo(degradedShare, 2);
    // The backlog gauge is refreshed on a timer (every 5 s) and then scraped:
    // the drained queue reaches the panel within one refresh and one scrape.
    await waitUntil(async () => (await single(dashboardExpr("Queued compactions"))) === 0, "the panel shows the drained queue", 30_000);
    expect(await single(dashboardExpr("Workers up"))).toBe(1);

    const callbacks = await prometheus.query(`sum by (outcome) (increase(compactd_callbacks_total{${SELECT}}[${RUN}]))`, at);
    const callbackCount = (outcome: string) => Math.round(callbacks.find((sample) => sample.metric.outcome === outcome)?.value ?? Number.NaN);
    expect([callbackCount("delivered"), callbackCount("rejected"), callbackCount("abandoned")]).toEqual([WITH_CALLBACK, WITH_CALLBACK, 0]);

    // The provider's 529s, as the worker counted them and as Prometheus shows them.
    const overloaded = Number(/status_code="529"\} (\d+)/.exec(await workerMetrics.registry.getSingleMetricAsString("compactd_summarizer_errors_total"))?.[1]);
    expect(overloaded).toBeGreaterThanOrEqual(DRIVEN.threshold.degraded * 2);
    expect(await single(`sum(compactd_summarizer_errors_total{${SELECT}, status_code="529"})`)).toBe(overloaded);
    expect(Math.round(await single(`sum(increase(compactd_summarizer_errors_total{${SELECT}, status_code="529"}[${RUN}]))`, at))).toBe(overloaded);

    // The API's own series, likewise evaluated at the API's last scrape.
    const apiAt = await single(`max(timestamp(up{${SELECT}, component="api"}))`);
    const accepted = await single(`sum(increase(compactd_http_requests_total{${SELECT}, method="POST", route="/v1/compactions", status_code="202"}[${RUN}]))`, apiAt);
    expect(Math.round(accepted)).toBe(FINISHED + DRIVEN.threshold.cancelled);
  }, 240_000);

  it("returns data for every dashboard query", async () => {
    const empty: string[] = [];
    for (const { where, expr } of dashboardQueries(readDashboard())) {
      if ((await prometheus.query(asGrafanaRuns(expr))).length === 0) empty.push(`${where}: ${expr}`);
    }
    expect(empty).toEqual([]);
  });

  it("holds exactly the alert conditions that what was driven implies", async () => {
    // 3 of 12 degraded (> 0.1, but below the slow burn's 0.3); 7 of 14 callback attempts refused (> 0.2).
    const expected = ["CompactdCallbacksFailing", "CompactdDegradedRatioHigh"];
    const holding: string[] = [];
    for (const rule of rules) if ((await prometheus.query(rule.expr)).length > 0) holding.push(rule.alert);
    expect(holding.sort()).toEqual(expected);
  });
});
