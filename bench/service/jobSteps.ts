/**
 * What each step of a service job costs on its own: the service's code run
 * step by step in the bench process on the bench's conversations, before
 * any service process starts (so nothing else competes for the core).
 *
 * The overhead scenario measures the service whole: CPU per job of every
 * process. This splits the part that is computation into its steps, and
 * says which of them the in-process core does too. What the service adds
 * beyond the sum of its own steps is transport: HTTP, Redis round trips,
 * BullMQ's scripts, logging and the collections of two more processes.
 */
import { CanonicalMessages } from "../../src/api/requestDigest.js";
import { jsonBytes, takenJson } from "../../src/api/asciiJson.js";
import { parseJson } from "../../src/api/jsonBodies.js";
import { compactionRequestSchema, parseBody } from "../../src/api/requestSchemas.js";
import { createCompactor } from "../../src/core/compactor.js";
import { planCut } from "../../src/core/cutPlan.js";
import { parseConversation } from "../../src/core/formats/parseConversation.js";
import { replacesOf } from "../../src/core/replaces.js";
import { normalizeSettings } from "../../src/core/settings.js";
import type { Summarizer } from "../../src/core/summarizer.js";
import { TokenEstimator } from "../../src/core/tokenEstimator.js";
import { decodePayload, encodeJson, encodePayload } from "../../src/queue/payloadCodec.js";
import { signWebhook } from "../../src/webhooks/signing.js";
import { TEST_WEBHOOK_SECRET } from "../../test/helpers/serviceConfig.js";
import type { Workload } from "./workload.js";

interface JobStep {
  readonly name: string;
  /** Which process does it. */
  readonly where: "agent" | "API" | "worker" | "API and core" | "worker and core";
  /** Median CPU time of the process (every thread) over every conversation and repetition, ms. */
  readonly medianMs: number;
  /**
   * The mean of the same: what the step costs a job on average, as the
   * overhead loops count CPU. A step whose cost depends on the conversation
   * (compression, which compresses a quarter of them twice) has a mean well
   * above its median.
   */
  readonly meanMs: number;
}

export interface JobStepsResult {
  readonly steps: readonly JobStep[];
  /** Repetitions per conversation. */
  readonly repetitions: number;
}

/** Answers at once with a summary about the size the bench's fake model streams. */
const INSTANT: Summarizer = {
  name: "instant",
  async summarize() {
    return { text: `## Goal\n${"The agent fixed the failing test and kept the API stable. ".repeat(20)}`, truncated: false };
  },
};

const CALLBACK_URL = "http://127.0.0.1:9/callback";

export async function measureJobSteps(workloads: readonly Workload[], repetitions: number): Promise<JobStepsResult> {
  const samples = new Map<string, { where: JobStep["where"]; ms: number[] }>();
  // CPU time, not wall time: the machine may be busy, and every thread counts.
  const timed = async <T>(name: string, where: JobStep["where"], step: () => T | Promise<T>): Promise<T> => {
    const started = process.cpuUsage();
    const value = await step();
    const used = process.cpuUsage(started);
    const ms = (used.user + used.system) / 1000;
    const entry = samples.get(name) ?? { where, ms: [] };
    entry.ms.push(ms);
    samples.set(name, entry);
    return value;
  };
  const compactor = createCompactor({ settings: { contextWindow: workloads[0]!.request.contextWindow, ...workloads[0]!.request.settings }, summarizer: INSTANT })!;

  // The first pass warms the JIT and the tokenizer's caches and is not kept.
  for (let pass = 0; pass <= repetitions; pass++) {
    if (pass === 1) samples.clear();
    for (const { request } of workloads) {
      const text = await timed("serialize the request", "agent", () => JSON.stringify({ ...request, callbackUrl: CALLBACK_URL }));
      const bytes = Buffer.from(text);
      const json = await timed("take the body in (ASCII JSON, asciiJson.ts)", "API", () => takenJson(bytes));
      const parsed = await timed("parse the body's JSON", "API", () => parseJson(json));
      const body = await timed("check it against the request schema", "API", () => parseBody(compactionRequestSchema, parsed));
      const conversation = await timed("read the conversation (parseConversation; the worker reads it again)", "API", () =>
        parseConversation({ messages: body.messages }, body.format, { nestingChecked: true }),
      );
      const estimator = new TokenEstimator();
      const settings = normalizeSettings({ ...body.settings, contextWindow: body.contextWindow });
      await timed("plan the cut: count the kept tail", "API and core", () => planCut(conversation, settings, estimator));
      await timed("canonical JSON, request digest and swap contract", "API", () => {
        const canonical = new CanonicalMessages();
        return [canonical.requestDigest(body, [body.messages]), replacesOf(body.messages, { digest: canonical.digestOf(body.messages) })];
      });
      const payload = await timed("compress the request body as taken in", "API", () => encodePayload(jsonBytes(json)));
      const decoded = (await timed("decompress and parse it", "worker", () => decodePayload(payload))) as { messages: unknown[] };
      const known = estimator.knownCounts(conversation);
      const result = await timed("compact, the model answering at once", "worker and core", () =>
        compactor.compact(parseConversation({ messages: decoded.messages }), { reason: request.reason, knownCounts: known }),
      );
      const resultJson = await timed("write and compress the result", "worker", () => {
        const json = JSON.stringify(result);
        encodeJson(`{"status":"completed","finishedAt":${Date.now()},"result":${json}}`);
        return json;
      });
      // The first delivery sends the text just written; only a queued retry reads the result back.
      await timed("sign the callback (its first delivery, from the text just stored)", "worker", () =>
        signWebhook(TEST_WEBHOOK_SECRET, "msg_bench", `{"type":"compaction.completed","result":${resultJson}}`),
      );
    }
  }
  const steps = [...samples].map(([name, { where, ms }]) => ({ name, where, medianMs: median(ms), meanMs: ms.reduce((a, b) => a + b, 0) / ms.length }));
  return { steps, repetitions };
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}
