/**
 * The whole service in the test process: the API app (driven with
 * `app.inject`), one or more workers, the fake Anthropic API the workers'
 * real SDK talks to, and a callback receiver; all on a fresh Redis prefix that
 * is deleted afterwards.
 */
import type { FastifyInstance } from "fastify";
import { buildApp } from "../../src/api/buildApp.js";
import type { Config } from "../../src/config.js";
import { createMetrics, type Metrics } from "../../src/metrics/metrics.js";
import { shardPrefix } from "../../src/queue/queueNames.js";
import { runWorker, type RunningWorker } from "../../src/worker/runWorker.js";
import { startWebhookReceiver, type Responder, type WebhookReceiver } from "../webhooks/webhookReceiver.js";
import { startFakeAnthropic, type FakeAnthropic, type Script } from "./fakeAnthropic.js";
import { deleteKeysUnder } from "./redisTestPrefix.js";
import { bearer, serviceConfig } from "./serviceConfig.js";

export interface ServiceHarness {
  readonly config: Config;
  readonly app: FastifyInstance;
  readonly fake: FakeAnthropic;
  readonly receiver: WebhookReceiver;
  readonly workerMetrics: Metrics;
  readonly workers: RunningWorker[];
  /** Worker-level errors (connection trouble), kept out of the test output. */
  readonly workerErrors: Error[];
  /** Starts another worker on the same queues. */
  startWorker(overrides?: Partial<Config>): Promise<RunningWorker>;
  /** POST /v1/compactions as tenant acme; returns the response body and status. */
  submit(body: Record<string, unknown>): Promise<{ status: number; body: Record<string, unknown> }>;
  /** GET /v1/compactions/:id?wait=N as tenant acme. */
  view(id: string, waitSeconds?: number): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

export interface HarnessOptions {
  readonly env?: Record<string, string>;
  readonly script?: Script;
  readonly workers?: number;
  readonly respond?: Responder;
}

export async function startServiceHarness(name: string, options: HarnessOptions = {}): Promise<ServiceHarness> {
  const fake = await startFakeAnthropic({ script: options.script ?? [] });
  const receiver = await startWebhookReceiver(options.respond);
  const config = serviceConfig(name, {
    ANTHROPIC_API_KEY: "sk-test",
    ANTHROPIC_BASE_URL: fake.url,
    COMPACTD_CALLBACK_ALLOW: "127.0.0.1",
    ...options.env,
  });
  const app = await buildApp(config);
  const workerMetrics = createMetrics();
  const workers: RunningWorker[] = [];
  const workerErrors: Error[] = [];
  const startWorker = async (overrides: Partial<Config> = {}): Promise<RunningWorker> => {
    const worker = await runWorker(
      { ...config, ...overrides },
      { metrics: workers.length === 0 ? workerMetrics : createMetrics(), onError: (error) => workerErrors.push(error) },
    );
    workers.push(worker);
    return worker;
  };
  for (let i = 0; i < (options.workers ?? 1); i++) await startWorker();

  return {
    config,
    app,
    fake,
    receiver,
    workerMetrics,
    workers,
    workerErrors,
    startWorker,
    async submit(body) {
      const response = await app.inject({ method: "POST", url: "/v1/compactions", headers: bearer("acme"), payload: body });
      return { status: response.statusCode, body: response.json() };
    },
    async view(id, waitSeconds = 0) {
      const response = await app.inject({ method: "GET", url: `/v1/compactions/${id}?wait=${waitSeconds}`, headers: bearer("acme") });
      return response.json();
    },
    async close() {
      await Promise.all(workers.map((worker) => worker.close()));
      await app.close();
      await fake.close();
      await receiver.stop();
      for (let shard = 0; shard < config.queueShards; shard++) await deleteKeysUnder(shardPrefix(config.queuePrefix, shard));
    },
  };
}
