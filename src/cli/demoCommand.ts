/**
 * `compactd demo [directory]`: the service's whole path on one machine, with
 * nothing set up beforehand. It runs the API and a worker on the Redis `dev`
 * would use (a private one when none answers), a webhook receiver on
 * loopback, and submits real conversations through the HTTP API with
 * callbacks — the bundled session, plus the files of `directory` or, without
 * one, the shared corpus beside the clone when it is there. Then it shows, per
 * conversation, what compaction did and how long it took, whether the signed
 * callback arrived, and the lines of /metrics a dashboard is drawn from.
 *
 * Exit code 0 when every job completed (degraded counts as completed) and
 * every callback arrived verified; 1 otherwise, with the reason.
 */
import { randomBytes } from "node:crypto";
import { existsSync, readdirSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import cliProgress from "cli-progress";
import Table from "cli-table3";
import { runApi } from "../api/runApi.js";
import type { Job } from "../client/apiTypes.js";
import { CompactdClient, type BatchItem } from "../client/compactdClient.js";
import { verifyWebhook } from "../client/verifyWebhook.js";
import type { WebhookEvent } from "../client/webhookEvents.js";
import { ConfigError, loadConfig, type Config } from "../config.js";
import { createMetrics } from "../metrics/metrics.js";
import { closeRedisConnection, createRedisConnection } from "../queue/redisConnection.js";
import { deleteKeysUnder } from "../queue/deleteKeys.js";
import { shutdownDeadline } from "../queue/shutdownDeadline.js";
import { createLogger } from "../telemetry/logger.js";
import { runWorker } from "../worker/runWorker.js";
import type { CommandOutput } from "./commandOutput.js";
import type { Io } from "./compactCommand.js";
import { readConversationInput } from "./jsonInput.js";
import { listCorpusConversations } from "./corpus.js";
import { localRedis } from "./localRedis.js";
import { sharedRedisLine } from "./serviceCommand.js";
import { EXIT, UsageError } from "./usageError.js";

/** Every conversation is compacted as if the model's window were this large. */
const DEMO_CONTEXT_WINDOW = 32_000;

/** The clone's root: src/cli and dist/cli both sit two folders below it. */
const packageRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

/** How long callbacks may trail the jobs they report before the demo gives up on them. */
const CALLBACK_GRACE_MS = 30_000;

/** Items per batch request; well under COMPACTD_MAX_BATCH_ITEMS's default. */
const BATCH_ITEMS = 50;

const PROGRESS_INTERVAL_MS = 200;

interface DemoConversation {
  readonly name: string;
  readonly input: unknown;
}

/** What became of one conversation. */
interface Outcome {
  readonly conversation: DemoConversation;
  /** The job's id, or undefined when the API found nothing to compact. */
  readonly jobId: string | undefined;
  job?: Job;
}

export async function runDemo(directory: string | undefined, io: Io, output: CommandOutput): Promise<number> {
  const say = (line: string) => io.stderr.write(`compactd demo: ${line}\n`);
  const conversations = await demoConversations(directory);
  const secret = `whsec_${randomBytes(32).toString("base64")}`;
  const apiKey = randomBytes(16).toString("hex");
  let config = demoConfig(io.env, secret, apiKey);
  // A Redis Cluster the user named is used as it is; otherwise the Redis dev would use.
  const redis = config.redisClusterNodes === undefined ? await localRedis({ env: io.env }) : undefined;
  say(redis?.description ?? sharedRedisLine(config));
  if (redis !== undefined) config = { ...config, redisUrl: redis.url };
  if (config.anthropicApiKey === undefined) {
    say("ANTHROPIC_API_KEY is not set; using the offline summarizer (structured extract, no model)");
  }

  const receiver = await startReceiver(secret);
  const metrics = createMetrics();
  // The worker's JSON log would bury the table: only its warnings and errors, on stderr.
  const logger = createLogger("worker", "warn", io.stderr);
  // One shutdown deadline for both, as `dev` has: closed one after the other, a deadline each would double the wait.
  const shutdown = shutdownDeadline(config.shutdownTimeoutMs);
  const worker = await runWorker(config, { metrics, serveMetrics: false, logger, onError: (error) => say(`worker: ${error.message}`), shutdown });
  const api = await runApi(config, { metrics, logger: false, shutdown }, "127.0.0.1");
  try {
    const base = `http://127.0.0.1:${api.port}`;
    say(`API ${base}, a worker, and a webhook receiver on ${receiver.url}; ${conversations.length} conversations, window ${DEMO_CONTEXT_WINDOW} tokens`);
    const client = new CompactdClient({ baseUrl: base, apiKey });
    const { outcomes, batchIds } = await submit(client, conversations, receiver.url);
    await watch(client, batchIds, outcomes, receiver, io);
    const jobs = outcomes.filter((outcome) => outcome.jobId !== undefined);
    const expectedCallbacks = jobs.length + batchIds.length;
    const deadline = Date.now() + CALLBACK_GRACE_MS;
    while (receiver.events.size + receiver.rejected < expectedCallbacks && Date.now() < deadline) await sleep(PROGRESS_INTERVAL_MS);
    for (const outcome of jobs) outcome.job = await client.get(outcome.jobId!);

    output.write(`${outcomeTable(outcomes, receiver).toString()}\n\n`);
    const metricsText = await (await fetch(`${base}/metrics`)).text();
    const failures = report(outcomes, receiver, expectedCallbacks, batchIds.length, metricsText, config, output);
    if (failures.length > 0) {
      say(failures.join("; "));
      return EXIT.failed;
    }
    return EXIT.compacted;
  } finally {
    await api.close();
    await worker.close();
    await receiver.close();
    await removeDemoKeys(config);
    await redis?.stop();
  }
}

/** The bundled session, then the files of `directory` or else the shared corpus when it is there. */
async function demoConversations(directory: string | undefined): Promise<DemoConversation[]> {
  const readJson = async (file: string) => (await readConversationInput(file, () => readFile(file))).input;
  const bundled = [{ name: "examples/session", input: await readJson(path.join(packageRoot, "examples/session.json")) }];
  if (directory !== undefined) {
    if (!existsSync(directory)) throw new UsageError(`${directory}: no such directory`);
    const files = readdirSync(directory).filter((name) => name.endsWith(".json")).sort();
    if (files.length === 0) throw new UsageError(`${directory}: no .json files in this directory`);
    const inputs = [];
    for (const name of files) inputs.push({ name: name.replace(/\.json$/, ""), input: await readJson(path.join(directory, name)) });
    return [...bundled, ...inputs];
  }
  const corpus = path.resolve(packageRoot, "../shared/corpus");
  if (!existsSync(corpus)) return bundled;
  return [...bundled, ...listCorpusConversations(corpus).map(({ name, input }) => ({ name, input }))];
}


/** The environment table with the demo's own key, secret, prefix and loopback receiver. */
function demoConfig(env: NodeJS.ProcessEnv, secret: string, apiKey: string): Config {
  try {
    const config = loadConfig({
      ...env,
      COMPACTD_API_KEYS: `demo:${apiKey}`,
      COMPACTD_WEBHOOK_SECRET: secret,
      COMPACTD_CALLBACK_ALLOW: "127.0.0.1",
      // Its own keys, so a shared Redis's other queues are never touched.
      COMPACTD_QUEUE_PREFIX: `{compactd-demo-${randomBytes(4).toString("hex")}}`,
      // Real sessions run to megabytes; a batch of them is one request.
      COMPACTD_BODY_LIMIT_BYTES: String(512 * 1024 * 1024),
    });
    return { ...config, port: 0, metricsPort: 0 };
  } catch (err) {
    if (err instanceof ConfigError) throw new UsageError(err.message);
    throw err;
  }
}

async function submit(
  client: CompactdClient,
  conversations: readonly DemoConversation[],
  callbackUrl: string,
): Promise<{ outcomes: Outcome[]; batchIds: string[] }> {
  const outcomes: Outcome[] = [];
  const batchIds: string[] = [];
  for (let start = 0; start < conversations.length; start += BATCH_ITEMS) {
    const chunk = conversations.slice(start, start + BATCH_ITEMS);
    const items = chunk.map((conversation, i): BatchItem => ({
      ...asRequest(conversation.input),
      contextWindow: DEMO_CONTEXT_WINDOW,
      conversationId: `demo-${start + i}`,
      metadata: { name: conversation.name },
    }));
    const batch = await client.batch(items, { callbackUrl });
    batchIds.push(batch.id);
    chunk.forEach((conversation, i) => outcomes.push({ conversation, jobId: batch.items[i]!.id }));
  }
  return { outcomes, batchIds };
}

/** A conversation file's messages and system prompt, in either provider's shape or as a bare list. */
function asRequest(input: unknown): Pick<BatchItem, "messages" | "system"> {
  if (Array.isArray(input)) return { messages: input };
  const { messages, system } = input as { messages?: unknown; system?: unknown };
  return { messages: messages as unknown[], ...(system !== undefined && { system }) };
}

/** Polls the batches until every item has finished, showing queued, running, done and degraded. */
async function watch(client: CompactdClient, batchIds: readonly string[], outcomes: readonly Outcome[], receiver: Receiver, io: Io): Promise<void> {
  const total = outcomes.filter((outcome) => outcome.jobId !== undefined).length;
  const bar = io.stderr.isTTY
    ? new cliProgress.SingleBar(
        { format: "  {bar} {value}/{total} done | {queued} queued | {running} running | {degraded} degraded", hideCursor: true, stream: io.stderr },
        cliProgress.Presets.shades_classic,
      )
    : undefined;
  bar?.start(total, 0, { queued: total, running: 0, degraded: 0 });
  let last = "";
  for (;;) {
    const batches = await Promise.all(batchIds.map((id) => client.getBatch(id)));
    const count = (status: string) => batches.reduce((sum, batch) => sum + (batch.counts[status] ?? 0), 0);
    const done = count("completed") + count("failed") + count("cancelled");
    const state = { queued: count("queued"), running: count("active"), degraded: receiver.degraded() };
    if (bar !== undefined) bar.update(done, state);
    else {
      const line = `${done}/${total} done, ${state.queued} queued, ${state.running} running, ${state.degraded} degraded`;
      if (line !== last) io.stderr.write(`compactd demo: ${line}\n`);
      last = line;
    }
    if (batches.every((batch) => batch.status === "completed")) break;
    await sleep(PROGRESS_INTERVAL_MS);
  }
  bar?.stop();
}

function outcomeTable(outcomes: readonly Outcome[], receiver: Receiver): Table.Table {
  const table = new Table({
    head: ["conversation", "messages", "tokens", "summarizer", "degraded", "queue", "worker", "callback"],
    style: { head: [], border: [] },
  });
  for (const { conversation, jobId, job } of outcomes) {
    if (jobId === undefined || job === undefined) continue;
    const name = clipStart(conversation.name, NAME_WIDTH);
    const result = job.result;
    const callback = receiver.events.has(jobId) ? "verified" : "missing";
    if (result === undefined) {
      table.push([name, { colSpan: 6, content: `${job.status}: ${job.error?.message ?? "no result"}` }, callback]);
      continue;
    }
    table.push([
      name,
      `${result.messagesBefore} → ${result.messagesAfter}`,
      `${result.tokensBefore} → ${result.tokensAfter}`,
      result.summarizer,
      result.degraded ? `yes: ${clip(result.degradedReason ?? "", 48)}` : "no",
      seconds(job.createdAt, job.startedAt),
      seconds(job.startedAt, job.finishedAt),
      callback,
    ]);
  }
  return table;
}

/** The totals and the metrics lines; returns what went wrong, if anything. */
function report(
  outcomes: readonly Outcome[],
  receiver: Receiver,
  expectedCallbacks: number,
  batches: number,
  metricsText: string,
  config: Config,
  output: CommandOutput,
): string[] {
  const jobs = outcomes.flatMap((outcome) => (outcome.job === undefined ? [] : [outcome.job]));
  const completed = jobs.filter((job) => job.status === "completed");
  const degraded = completed.filter((job) => job.result?.degraded === true).length;
  const failed = jobs.length - completed.length;
  const before = completed.reduce((sum, job) => sum + job.result!.tokensBefore, 0);
  const after = completed.reduce((sum, job) => sum + job.result!.tokensAfter, 0);
  const nothing = outcomes.length - jobs.length;
  const untouched = outcomes.filter((outcome) => outcome.jobId === undefined).map((outcome) => outcome.conversation.name);
  const lines = [
    ...(untouched.length === 0
      ? []
      : [`nothing to compact (all within the recent-tokens budget): ${untouched.slice(0, 5).join(", ")}${untouched.length > 5 ? ` and ${untouched.length - 5} more` : ""}`]),
    `${outcomes.length} conversations: ${completed.length} compacted (${degraded} degraded), ${nothing} nothing to compact, ${failed} failed`,
    `tokens ${before} → ${after}${before > 0 ? ` (${Math.round((100 * (before - after)) / before)}% less)` : ""}`,
    `callbacks: ${receiver.events.size} of ${expectedCallbacks} arrived with a valid signature (${jobs.length} compaction, ${batches} batch.completed)`,
  ];
  if (config.anthropicApiKey !== undefined) {
    const used = (direction: string) => metricValue(metricsText, `compactd_summarizer_tokens_total{direction="${direction}"}`);
    lines.push(`the summarizer used ${used("input")} input and ${used("output")} output tokens`);
  }
  const shown = metricsText
    .split("\n")
    .filter((line) => /^compactd_(jobs_total|degraded_total|tokens_before_(sum|count)|tokens_after_(sum|count))\b/.test(line))
    // Series the service pre-creates at zero say nothing about this run.
    .filter((line) => !line.endsWith(" 0"));
  output.write(`${lines.join("\n")}\n\n/metrics (what Grafana shows):\n${shown.map((line) => `  ${line}`).join("\n")}\n`);

  const problems: string[] = [];
  if (failed > 0) problems.push(`${failed} of ${jobs.length} jobs did not complete`);
  if (receiver.rejected > 0) problems.push(`${receiver.rejected} callbacks failed signature verification`);
  if (receiver.events.size < expectedCallbacks) problems.push(`${expectedCallbacks - receiver.events.size} callbacks did not arrive`);
  return problems;
}

function metricValue(text: string, series: string): number {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
}

interface Receiver {
  readonly url: string;
  /** Verified events by job or batch id. */
  readonly events: Map<string, WebhookEvent>;
  /** Requests whose signature did not verify. */
  readonly rejected: number;
  degraded(): number;
  close(): Promise<void>;
}

/** The agent's side: a loopback HTTP server that verifies each callback's Standard Webhooks signature. */
async function startReceiver(secret: string): Promise<Receiver> {
  const events = new Map<string, WebhookEvent>();
  let rejected = 0;
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      try {
        const event = verifyWebhook(Buffer.concat(chunks), request.headers, secret);
        events.set(event.id, event);
        response.writeHead(204).end();
      } catch {
        rejected++;
        response.writeHead(400).end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/compactd`,
    events,
    get rejected() {
      return rejected;
    },
    degraded: () => [...events.values()].filter((event) => event.type === "compaction.completed" && event.result.degraded).length,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/**
 * The demo's keys: it used a prefix of its own, so nothing else is touched.
 * On a Redis Cluster they are left to expire with the result retention.
 */
async function removeDemoKeys(config: Config): Promise<void> {
  if (config.redisClusterNodes !== undefined) return;
  // A one-off connection that may wait for the handshake: the API role fails
  // fast on a connection that is not yet ready.
  const redis = createRedisConnection(config.redisUrl, "worker", config.queuePrefix);
  try {
    await deleteKeysUnder(redis, config.queuePrefix);
  } finally {
    await closeRedisConnection(redis);
  }
}

function seconds(from: string | null, to: string | null): string {
  if (from === null || to === null) return "—";
  return `${((Date.parse(to) - Date.parse(from)) / 1000).toFixed(2)} s`;
}

/** Room for a conversation's name in the table; long corpus paths keep their distinctive end. */
const NAME_WIDTH = 48;

function clipStart(text: string, length: number): string {
  return text.length <= length ? text : `…${text.slice(text.length - length + 1)}`;
}

function clip(text: string, length: number): string {
  return text.length <= length ? text : `${text.slice(0, length - 1)}…`;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
