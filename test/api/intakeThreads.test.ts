/**
 * Large bodies are taken in on intake threads (COMPACTD_INTAKE_THREAD_MIN_BYTES):
 * the answers are the ones the event loop gives, the work really left the
 * event loop, and a request over COMPACTD_INTAKE_DEADLINE_MS gets a 503 naming
 * it with nothing queued. The threads run the build (dist/), like the service.
 */
import { Queue } from "bullmq";
import type { FastifyInstance, LightMyRequestResponse } from "fastify";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { buildApp } from "../../src/api/buildApp.js";
import * as examination from "../../src/api/requestExamination.js";
import type { Config } from "../../src/config.js";
import { COMPACTION_QUEUE } from "../../src/queue/queueNames.js";
import { conversation, reactTurn } from "../helpers/conversations.js";
import { longRunBody } from "../helpers/heavyBodies.js";
import { deleteKeysUnder } from "../helpers/redisTestPrefix.js";
import { storedJobData, storedPayload } from "../helpers/storedJob.js";
import { bearer, serviceConfig } from "../helpers/serviceConfig.js";

// The event loop's examination, observed: a body taken in on a thread must never reach it.
vi.mock("../../src/api/requestExamination.js", async (importOriginal) => {
  const real = await importOriginal<typeof import("../../src/api/requestExamination.js")>();
  return { ...real, examineCompaction: vi.fn(real.examineCompaction), examineBatch: vi.fn(real.examineBatch) };
});

interface Api {
  readonly app: FastifyInstance;
  readonly config: Config;
}

async function api(name: string, env: Record<string, string> = {}): Promise<Api> {
  const config = serviceConfig(name, env);
  return { app: await buildApp(config), config };
}

let onLoop: Api;
let onThread: Api;
beforeAll(async () => {
  onLoop = await api("intake-loop");
  // Every body on a thread.
  onThread = await api("intake-thread", { COMPACTD_INTAKE_THREAD_MIN_BYTES: "1" });
});
afterAll(async () => {
  for (const { app, config } of [onLoop, onThread]) {
    await app.close();
    await deleteKeysUnder(config.queuePrefix);
  }
});

function send(target: Api, url: string, payload: string, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
  return target.app.inject({ method: "POST", url, headers: { ...bearer("acme"), "content-type": "application/json", ...headers }, payload });
}

const messages = conversation(...Array.from({ length: 5 }, () => reactTurn({ rounds: 3, toolResultChars: 2_000 })));
const compactable = { messages, contextWindow: 20_000, settings: { reserveTokens: 4_000 }, conversationId: "c-1" };

/** Requests whose answer does not depend on what was queued before. */
const CASES: Record<string, { url?: string; body: string; headers?: Record<string, string> }> = {
  "nothing to compact": { body: JSON.stringify({ messages: [{ role: "user", content: "hi" }], contextWindow: 20_000 }) },
  "malformed JSON": { body: '{"messages": [' },
  "a poisoned prototype": { body: '{"messages": [], "contextWindow": 20000, "__proto__": {"x": 1}}' },
  "an unknown field": { body: JSON.stringify({ ...compactable, colour: "red" }) },
  "a window too small": { body: JSON.stringify({ ...compactable, contextWindow: 100 }) },
  "a malformed conversation": { body: JSON.stringify({ ...compactable, messages: [{ role: "user", content: 7 }] }) },
  "a batch with a malformed item": {
    url: "/v1/compactions/batch",
    body: JSON.stringify({ items: [compactable, { ...compactable, messages: [{ role: "tool", content: "x" }] }] }),
  },
};

describe("a body taken in on an intake thread", () => {
  it("leaves the event loop: the event loop's examination never sees it", async () => {
    const examineCompaction = vi.mocked(examination.examineCompaction);
    const examineBatch = vi.mocked(examination.examineBatch);
    const body = JSON.stringify({ ...compactable, conversationId: "c-loop" });
    const batch = JSON.stringify({ items: [{ ...compactable, conversationId: "c-batch" }] });
    examineCompaction.mockClear();
    examineBatch.mockClear();
    expect((await send(onThread, "/v1/compactions", body)).statusCode).toBe(202);
    expect((await send(onThread, "/v1/compactions/batch", batch)).statusCode).toBe(202);
    expect([examineCompaction.mock.calls.length, examineBatch.mock.calls.length]).toEqual([0, 0]);
    expect((await send(onLoop, "/v1/compactions", body)).statusCode).toBe(202);
    expect((await send(onLoop, "/v1/compactions/batch", batch)).statusCode).toBe(202);
    expect([examineCompaction.mock.calls.length, examineBatch.mock.calls.length]).toEqual([1, 1]);
  });

  it.each(Object.keys(CASES))("is answered as on the event loop: %s", async (name) => {
    const { url = "/v1/compactions", body, headers } = CASES[name]!;
    const threaded = await send(onThread, url, body, headers);
    const looped = await send(onLoop, url, body, headers);
    expect(threaded.statusCode).toBe(looped.statusCode);
    expect(threaded.json()).toEqual(looped.json());
  });

  it("queues the same job, and replays and refuses an Idempotency-Key the same way", async () => {
    const headers = { "idempotency-key": "same-job" };
    const [threaded, looped] = [await send(onThread, "/v1/compactions", JSON.stringify(compactable), headers), await send(onLoop, "/v1/compactions", JSON.stringify(compactable), headers)];
    expect([threaded.statusCode, looped.statusCode]).toEqual([202, 202]);
    const [fromThread, fromLoop] = [await storedJobData(onThread.config, threaded.json().id), await storedJobData(onLoop.config, looped.json().id)];
    const { submissionId: _a, ...threadRest } = fromThread;
    const { submissionId: _b, ...loopRest } = fromLoop;
    expect(threadRest).toEqual(loopRest);
    // The payload is the request body as it came, compressed, on either path: not written out again.
    expect(await storedPayload(onThread.config, threaded.json().id, fromThread)).toEqual(compactable);
    expect(await storedPayload(onLoop.config, looped.json().id, fromLoop)).toEqual(compactable);

    const replayed = await send(onThread, "/v1/compactions", JSON.stringify(compactable), headers);
    expect(replayed.headers["idempotent-replayed"]).toBe("true");
    expect(replayed.json().id).toBe(threaded.json().id);
    const reused = await send(onThread, "/v1/compactions", JSON.stringify({ ...compactable, contextWindow: 30_000 }), headers);
    expect(reused.statusCode).toBe(422);
  });

  it("is answered 503 naming COMPACTD_INTAKE_DEADLINE_MS when its work runs past it, with nothing queued, and the next request is served", async () => {
    const strict = await api("intake-deadline", { COMPACTD_INTAKE_THREAD_MIN_BYTES: "1", COMPACTD_INTAKE_DEADLINE_MS: "100" });
    try {
      // Eleven messages of one 1,000,000-character run: far more than 100 ms of parsing, digesting and planning.
      const answer = await send(strict, "/v1/compactions", longRunBody(11, 1_000_000), { "idempotency-key": "heavy" });
      expect(answer.statusCode).toBe(503);
      expect(answer.headers["retry-after"]).toBeDefined();
      expect(answer.json().error.code).toBe("intake_deadline");
      expect(answer.json().error.message).toContain("COMPACTD_INTAKE_DEADLINE_MS");
      const queue = new Queue(COMPACTION_QUEUE, { connection: { url: strict.config.redisUrl }, prefix: strict.config.queuePrefix });
      try {
        expect(await queue.getJobCountByTypes("waiting", "prioritized", "delayed", "active", "completed", "failed")).toBe(0);
      } finally {
        await queue.close();
      }
      const small = await send(strict, "/v1/compactions", JSON.stringify({ messages: [{ role: "user", content: "hi" }], contextWindow: 20_000 }));
      expect(small.json()).toEqual({ status: "nothing_to_compact", stillAboveThreshold: false });
    } finally {
      await strict.app.close();
      await deleteKeysUnder(strict.config.queuePrefix);
    }
  });
});
