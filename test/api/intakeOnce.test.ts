/**
 * Each thing once per request: the API writes the messages' canonical JSON
 * once (for the idempotency digest and the job's exact-swap digest alike),
 * walks the body's nesting depth once, reads the job once on an idempotent
 * POST, and compiles the callback allow-list once at start-up. Each is
 * observed on the real function or method, called through as it is.
 */
import { createHash } from "node:crypto";
import { Queue } from "bullmq";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { buildApp } from "../../src/api/buildApp.js";
import * as depth from "../../src/core/formats/nestingDepth.js";
import * as canonical from "../../src/core/replaces.js";
import * as allowList from "../../src/webhooks/callbackAllow.js";
import { conversation, reactTurn } from "../helpers/conversations.js";
import { deleteKeysUnder } from "../helpers/redisTestPrefix.js";
import { storedJobData } from "../helpers/storedJob.js";
import { bearer, serviceConfig } from "../helpers/serviceConfig.js";

vi.mock("../../src/core/formats/nestingDepth.js", async (importOriginal) => {
  const real = await importOriginal<typeof import("../../src/core/formats/nestingDepth.js")>();
  return { ...real, tooDeeplyNested: vi.fn(real.tooDeeplyNested), refusedRequestField: vi.fn(real.refusedRequestField) };
});
vi.mock("../../src/webhooks/callbackAllow.js", async (importOriginal) => {
  const real = await importOriginal<typeof import("../../src/webhooks/callbackAllow.js")>();
  return { ...real, parseCallbackAllow: vi.fn(real.parseCallbackAllow) };
});

const config = serviceConfig("intake-once", { COMPACTD_CALLBACK_ALLOW: "hooks.internal" });
let app: FastifyInstance;

beforeAll(async () => {
  app = await buildApp(config, { resolveHost: async () => [{ address: "93.184.215.14", family: 4 }] });
});

afterAll(async () => {
  await app.close();
  await deleteKeysUnder(config.queuePrefix);
});

const compactable = (extra: Record<string, unknown> = {}) => ({
  messages: conversation(...Array.from({ length: 5 }, () => reactTurn({ rounds: 3, toolResultChars: 2_000 }))),
  contextWindow: 20_000,
  settings: { reserveTokens: 4_000 },
  ...extra,
});

function post(body: unknown, key?: string) {
  const headers = { ...bearer("acme"), ...(key !== undefined && { "idempotency-key": key }) };
  return app.inject({ method: "POST", url: "/v1/compactions", headers, payload: body as Record<string, unknown> });
}

describe("an idempotent POST that queues a job", () => {
  it("writes its messages' canonical JSON once, for both digests, and they stay what they were", async () => {
    const body = compactable();
    // canonicalJson writes every key and every primitive value with JSON.stringify: counting those calls counts its walk.
    const stringify = vi.spyOn(JSON, "stringify");
    let response;
    let oneWalk;
    let posting;
    try {
      canonical.canonicalJson(body.messages);
      oneWalk = stringify.mock.calls.length;
      stringify.mockClear();
      response = await post(body, "canonical-once");
      posting = stringify.mock.calls.length;
    } finally {
      stringify.mockRestore();
    }
    expect(response.statusCode).toBe(202);
    // One walk over the conversation (plus the envelope's few fields and the rest of the request's work), not two.
    expect(posting).toBeLessThan(oneWalk * 1.3);

    const data = await storedJobData(config, response.json().id);
    const sha = (text: string) => createHash("sha256").update(text).digest("hex");
    expect(data.replaces.digest).toBe(sha(canonical.canonicalJson(body.messages)));
    expect(data.requestDigest).toBe(sha(canonical.canonicalJson({ ...body, format: "auto", reason: "manual" })));
  });

  it("reads the job once, whether it creates it, replays it, or answers nothing to compact", async () => {
    const getJob = vi.spyOn(Queue.prototype, "getJob");
    try {
      const body = compactable({ conversationId: "once-1" });
      getJob.mockClear();
      const created = await post(body, "get-once");
      expect(created.statusCode).toBe(202);
      expect(getJob).toHaveBeenCalledTimes(1);

      getJob.mockClear();
      const replayed = await post(body, "get-once");
      expect(replayed.headers["idempotent-replayed"]).toBe("true");
      expect(replayed.json().id).toBe(created.json().id);
      expect(getJob).toHaveBeenCalledTimes(1);

      getJob.mockClear();
      const reused = await post(compactable({ conversationId: "once-2" }), "get-once");
      expect(reused.statusCode).toBe(422);
      expect(getJob.mock.calls.length).toBeLessThanOrEqual(1);

      getJob.mockClear();
      const nothing = await post({ messages: [{ role: "user", content: "hi" }], contextWindow: 20_000 }, "get-once-nothing");
      expect(nothing.json()).toEqual({ status: "nothing_to_compact", stillAboveThreshold: false });
      expect(getJob).toHaveBeenCalledTimes(1);
    } finally {
      getJob.mockRestore();
    }
  });
});

describe("every POST", () => {
  it("walks the body once for its nesting depth and refused keys, and the conversation not again", async () => {
    const walks = [vi.mocked(depth.refusedRequestField), vi.mocked(depth.tooDeeplyNested)] as const;
    const counts = () => walks.map((walk) => walk.mock.calls.length);
    walks.forEach((walk) => walk.mockClear());
    expect((await post(compactable())).statusCode).toBe(202);
    expect(counts()).toEqual([1, 0]);

    walks.forEach((walk) => walk.mockClear());
    const batch = await app.inject({
      method: "POST",
      url: "/v1/compactions/batch",
      headers: bearer("acme"),
      payload: { items: [compactable(), compactable()] },
    });
    expect(batch.statusCode).toBe(202);
    expect(counts()).toEqual([1, 0]);
  });

  it("checks a callback URL against the allow-list compiled at start-up, not compiled again", async () => {
    const parseCallbackAllow = vi.mocked(allowList.parseCallbackAllow);
    const atStart = parseCallbackAllow.mock.calls.length;
    expect(atStart).toBeGreaterThan(0);
    const allowed = await post(compactable({ callbackUrl: "https://hooks.internal/done" }));
    expect(allowed.statusCode).toBe(202);
    const refused = await post(compactable({ callbackUrl: "http://10.1.2.3/done" }));
    expect(refused.statusCode).toBe(400);
    expect(parseCallbackAllow.mock.calls.length).toBe(atStart);
  });
});
