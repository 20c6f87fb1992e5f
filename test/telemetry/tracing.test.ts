/**
 * Tracing as an operator meets it: `compactd serve` and `compactd worker` as
 * real processes, configured only by the standard OTEL_* variables, export
 * over OTLP/HTTP to a stand-in collector that decodes the protobuf; a job is
 * driven from an agent's request carrying a W3C `traceparent` through the
 * stand-in Anthropic API to a webhook receiver.
 *
 * Needs the build (`npm test` builds first; run `npm run build` before this
 * file alone).
 */
import { randomBytes } from "node:crypto";
import { request as httpRequest } from "node:http";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { serviceEnv, startServiceProcess, type ServiceProcess } from "../../bench/service/serviceProcesses.js";
import { startFakeAnthropic, type FakeAnthropic } from "../helpers/fakeAnthropic.js";
import { markedConversation, markedRequest } from "../helpers/markedConversation.js";
import { SPAN_KIND, startOtlpCollector, type OtlpCollector, type ReceivedSpan } from "../helpers/otlpCollector.js";
import { deleteKeysUnder, testPrefix } from "../helpers/redisTestPrefix.js";
import { bearer } from "../helpers/serviceConfig.js";
import { waitUntil } from "../helpers/waitUntil.js";
import { startWebhookReceiver, type WebhookReceiver } from "../webhooks/webhookReceiver.js";

/** Spans leave a process within this (the batch processor's delay), not the default 5 s. */
const FAST_EXPORT = { OTEL_BSP_SCHEDULE_DELAY: "100" };

/**
 * A module hook (node --import) that records every module of the
 * OpenTelemetry SDK, its exporter and bullmq-otel a process loads, in the
 * file MODULE_LOG names: whether tracing cost a process anything is whether
 * these were loaded at all.
 */
const SDK_MODULE_HOOKS = String.raw`
import { appendFileSync } from "node:fs";
const SDK = /node_modules\/(@opentelemetry\/(sdk-|exporter-|otlp-|resources|context-async-hooks)|bullmq-otel)/;
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  if (SDK.test(resolved.url)) appendFileSync(process.env.MODULE_LOG, resolved.url + "\n");
  return resolved;
}
`;
const REGISTER_HOOKS = String.raw`
import { register } from "node:module";
register("./sdk-module-hooks.mjs", import.meta.url);
`;

let fake: FakeAnthropic;
let collector: OtlpCollector;
let receiver: WebhookReceiver;
let scratch: string;
let recorder: string;
const running: ServiceProcess[] = [];
const prefixes: string[] = [];

beforeAll(async () => {
  fake = await startFakeAnthropic();
  collector = await startOtlpCollector();
  receiver = await startWebhookReceiver();
  scratch = mkdtempSync(path.join(tmpdir(), "compactd-tracing-"));
  recorder = path.join(scratch, "record-sdk-modules.mjs");
  writeFileSync(path.join(scratch, "sdk-module-hooks.mjs"), SDK_MODULE_HOOKS);
  writeFileSync(recorder, REGISTER_HOOKS);
});

/** Stops every process, which flushes the spans it still holds. */
async function stopAll(): Promise<void> {
  for (const process of running.splice(0)) await process.stop();
}

afterEach(stopAll);

afterAll(async () => {
  await fake?.close();
  await collector?.close();
  await receiver?.stop();
  rmSync(scratch, { recursive: true, force: true });
  for (const prefix of prefixes) await deleteKeysUnder(prefix);
});

interface Deployment {
  readonly api: ServiceProcess;
  readonly metricsPort: number;
  /** The SDK modules each process loaded (see SDK_MODULE_HOOKS). */
  readonly loaded: { readonly api: () => string; readonly worker: () => string };
}

/** An API and a worker process sharing `env`, each recording the SDK modules it loads. */
async function deploy(name: string, env: Record<string, string>): Promise<Deployment> {
  const queuePrefix = testPrefix(name);
  prefixes.push(queuePrefix);
  const shared = { ...serviceEnv({ queuePrefix, anthropicBaseUrl: fake.url, workerConcurrency: 4 }), ...env };
  const logs = { api: path.join(scratch, `${name}-api.log`), worker: path.join(scratch, `${name}-worker.log`) };
  for (const log of Object.values(logs)) writeFileSync(log, "");
  const recording = (log: string) => ({ NODE_OPTIONS: `--import ${recorder}`, MODULE_LOG: log });
  const worker = await startServiceProcess("worker", { ...shared, ...recording(logs.worker) });
  running.push(worker);
  const api = await startServiceProcess("serve", { ...shared, ...recording(logs.api) });
  running.push(api);
  return {
    api,
    metricsPort: worker.metricsPort,
    loaded: { api: () => readFileSync(logs.api, "utf8"), worker: () => readFileSync(logs.worker, "utf8") },
  };
}

/** Submits one compaction with a callback, as an agent inside `traceparent`'s trace, and waits for the callback. */
async function compactWithCallback(
  api: ServiceProcess,
  traceparent: string,
  marker: string,
  slowLarge = false,
): Promise<{ jobId: string; callbackHeaders: Record<string, unknown> }> {
  const callbackPath = `/${marker}`;
  const request = { ...markedRequest(marker, { reason: "overflow", callbackUrl: receiver.url(callbackPath) }) };
  if (slowLarge) request.messages = markedConversation(marker, 50);
  const headers = { ...bearer("acme"), "content-type": "application/json", traceparent };
  const body = JSON.stringify(request);
  const response = slowLarge
    ? await postInParts(`http://127.0.0.1:${api.port}/v1/compactions`, headers, body)
    : await fetch(`http://127.0.0.1:${api.port}/v1/compactions`, { method: "POST", headers, body });
  expect(response.status).toBe(202);
  const jobId = String(((await response.json()) as { id: string }).id);
  await waitUntil(() => receiver.received.some((callback) => callback.path === callbackPath), "the callback arrived", 30_000);
  const callback = receiver.received.find((received) => received.path === callbackPath)!;
  return { jobId, callbackHeaders: callback.headers };
}

const hexId = (bytes: number): string => randomBytes(bytes).toString("hex");

/**
 * POSTs `body` in four parts with pauses between them, as a slow client's
 * upload arrives: the API reads most of it after its request hooks ran, in
 * events of the request stream.
 */
function postInParts(url: string, headers: Record<string, string>, body: string): Promise<{ status: number; json(): Promise<unknown> }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(url, { method: "POST", headers: { ...headers, "content-length": String(Buffer.byteLength(body)) } }, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () => resolve({ status: response.statusCode ?? 0, json: async () => JSON.parse(Buffer.concat(chunks).toString("utf8")) }));
    });
    request.on("error", reject);
    const part = Math.ceil(body.length / 4);
    const send = (index: number): void => {
      if (index === 4) {
        request.end();
        return;
      }
      request.write(body.slice(index * part, (index + 1) * part));
      setTimeout(() => send(index + 1), 100);
    };
    send(0);
  });
}

describe("tracing over OTLP, turned on by OTEL_EXPORTER_OTLP_ENDPOINT", () => {
  it("continues the agent's trace through the API, the queue, the worker, the summarizer and into the webhook", async () => {
    const deployment = await deploy("tracing-on", { ...FAST_EXPORT, OTEL_EXPORTER_OTLP_ENDPOINT: collector.url });
    const traceId = hexId(16);
    const agentSpanId = hexId(8);
    const { jobId, callbackHeaders } = await compactWithCallback(deployment.api, `00-${traceId}-${agentSpanId}-01`, "traced");

    // The receiver's request continues the agent's trace.
    const webhookParent = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(String(callbackHeaders.traceparent));
    expect(webhookParent?.[1]).toBe(traceId);

    const inTrace = (): ReceivedSpan[] => collector.spans.filter((span) => span.traceId === traceId);
    const find = (predicate: (span: ReceivedSpan) => boolean, what: string): ReceivedSpan => {
      const matches = inTrace().filter(predicate);
      if (matches.length !== 1) throw new Error(`expected one ${what} span, got ${matches.length}: ${JSON.stringify(inTrace().map((span) => span.name))}`);
      return matches[0]!;
    };
    const isDelivery = (span: ReceivedSpan): boolean => span.name === "deliver callback";
    await waitUntil(() => inTrace().some((span) => span.spanId === webhookParent?.[2] && isDelivery(span)), "the delivery span was exported", 20_000);
    // Its parent, the compaction job's processing (the first delivery is made
    // from the job's settling), ends after it and may be exported in a later batch.
    const deliveryParent = (): string | undefined => inTrace().find((span) => span.spanId === webhookParent?.[2])?.parentSpanId;
    await waitUntil(() => inTrace().some((span) => span.spanId === deliveryParent()), "the job processing span was exported", 20_000);

    const request = find((span) => span.name === "POST /v1/compactions", "API request");
    expect(request).toMatchObject({ parentSpanId: agentSpanId, kind: SPAN_KIND.server, service: "compactd-api" });
    expect(request.attributes).toMatchObject({ "http.route": "/v1/compactions", "http.response.status_code": 202 });

    const enqueue = find((span) => span.kind === SPAN_KIND.producer && span.service === "compactd-api", "enqueue");
    expect(enqueue.parentSpanId).toBe(request.spanId);

    const processing = find((span) => span.kind === SPAN_KIND.consumer && span.attributes["bullmq.job.id"] === jobId, "job processing");
    expect(processing).toMatchObject({ parentSpanId: enqueue.spanId, service: "compactd-worker" });
    expect(processing.attributes).toMatchObject({ "compactd.job.id": jobId, "compactd.reason": "overflow", "compactd.outcome": "completed", "compactd.job.attempt": 1 });

    const summarize = inTrace().filter((span) => span.name === "summarize");
    expect(summarize.length).toBeGreaterThanOrEqual(1);
    for (const call of summarize) {
      expect(call).toMatchObject({ parentSpanId: processing.spanId, kind: SPAN_KIND.client });
      expect(call.attributes).toMatchObject({ "gen_ai.system": "anthropic", "compactd.summary.truncated": false, "compactd.summary.attempt": 1 });
      expect(typeof call.attributes["gen_ai.request.model"]).toBe("string");
    }

    // Delivered from the job's settling, at once: no callback job was queued.
    const delivery = find(isDelivery, "callback delivery");
    expect(delivery).toMatchObject({ parentSpanId: processing.spanId, kind: SPAN_KIND.client, spanId: webhookParent?.[2] });
    expect(inTrace().filter((span) => span.kind === SPAN_KIND.producer && span.service === "compactd-worker")).toEqual([]);
    expect(delivery.attributes).toMatchObject({ "compactd.callback.outcome": "delivered", "server.address": "127.0.0.1" });

    // Nothing of the conversation rides along: no attribute holds the marker the messages carry.
    expect(JSON.stringify(collector.spans)).not.toContain("traced ");
    // BullMQ's housekeeping (polling, lock renewals) is not exported as traces of their own.
    expect(collector.spans.filter((span) => span.scope === "bullmq" && span.parentSpanId === "" && span.kind === SPAN_KIND.internal)).toEqual([]);
    // The processes did load the SDK: the recorder sees it (the check below, with tracing off, relies on that).
    expect(deployment.loaded.worker()).toContain("@opentelemetry/sdk-trace");
    expect(deployment.loaded.api()).toContain("@opentelemetry/sdk-trace");

    // The job's latency observation links to the trace, in an OpenMetrics scrape.
    const scrape = await fetch(`http://127.0.0.1:${deployment.metricsPort}/metrics`, { headers: { accept: "application/openmetrics-text; version=1.0.0" } });
    expect(scrape.headers.get("content-type")).toContain("application/openmetrics-text");
    const latencyLines = (await scrape.text()).split("\n").filter((line) => line.startsWith("compactd_job_latency_seconds_bucket{"));
    expect(latencyLines.some((line) => line.includes('reason="overflow"') && line.includes(`# {trace_id="${traceId}"`))).toBe(true);
    // So does the API's latency of the request that started the trace.
    const apiScrape = await (await fetch(`http://127.0.0.1:${deployment.api.port}/metrics`, { headers: { accept: "application/openmetrics-text" } })).text();
    const requestLines = apiScrape.split("\n").filter((line) => line.startsWith("compactd_http_request_duration_seconds_bucket{") && line.includes('route="/v1/compactions"'));
    expect(requestLines.some((line) => line.includes(`# {trace_id="${traceId}",span_id="${request.spanId}"}`))).toBe(true);
    // The text format, for everyone else, has no exemplars.
    const text = await (await fetch(`http://127.0.0.1:${deployment.metricsPort}/metrics`)).text();
    expect(text).toContain("compactd_jobs_total{");
    expect(text).not.toContain("trace_id");
  }, 90_000);
  it("keeps the request's trace for a large body a slow client sends in parts, taken in on an intake thread", async () => {
    const deployment = await deploy("tracing-large", { ...FAST_EXPORT, OTEL_EXPORTER_OTLP_ENDPOINT: collector.url });
    const traceId = hexId(16);
    // About 350 KB, above COMPACTD_INTAKE_THREAD_MIN_BYTES (128 KiB).
    const { jobId } = await compactWithCallback(deployment.api, `00-${traceId}-${hexId(8)}-01`, "large", true);
    const inTrace = (): ReceivedSpan[] => collector.spans.filter((span) => span.traceId === traceId);
    const isProcessing = (span: ReceivedSpan): boolean => span.kind === SPAN_KIND.consumer && span.attributes["bullmq.job.id"] === jobId;
    // The processing span ends after the delivery span it encloses, so it can reach the collector in a later export batch.
    await waitUntil(() => inTrace().some(isProcessing), "the job processing span was exported", 20_000);
    const request = inTrace().find((span) => span.name === "POST /v1/compactions");
    const enqueue = inTrace().find((span) => span.kind === SPAN_KIND.producer && span.service === "compactd-api");
    const processing = inTrace().find(isProcessing);
    expect(enqueue?.parentSpanId).toBe(request?.spanId);
    expect(processing?.parentSpanId).toBe(enqueue?.spanId);
  }, 90_000);
});

describe("with no OTEL_* variable set", () => {
  it("exports nothing, sends no traceparent and never loads the SDK", async () => {
    const exportsBefore = collector.exports;
    const deployment = await deploy("tracing-off", {});
    const traceId = hexId(16);
    const { callbackHeaders } = await compactWithCallback(deployment.api, `00-${traceId}-${hexId(8)}-01`, "untraced");
    expect(callbackHeaders.traceparent).toBeUndefined();
    expect(deployment.loaded.api()).toBe("");
    expect(deployment.loaded.worker()).toBe("");
    await stopAll();
    expect(collector.exports).toBe(exportsBefore);
    expect(collector.spans.filter((span) => span.traceId === traceId)).toEqual([]);
  }, 60_000);

  it("OTEL_SDK_DISABLED=true wins over a configured endpoint", async () => {
    const exportsBefore = collector.exports;
    const deployment = await deploy("tracing-disabled", { ...FAST_EXPORT, OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_SDK_DISABLED: "true" });
    const { callbackHeaders } = await compactWithCallback(deployment.api, `00-${hexId(16)}-${hexId(8)}-01`, "disabled");
    expect(callbackHeaders.traceparent).toBeUndefined();
    expect(deployment.loaded.worker()).toBe("");
    await stopAll();
    expect(collector.exports).toBe(exportsBefore);
  }, 60_000);
});
