import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { buildApp } from "../../src/api/buildApp.js";
import type { Config } from "../../src/config.js";
import { createMetrics, type Metrics } from "../../src/metrics/metrics.js";
import type { CompactionJobData } from "../../src/queue/compactionJob.js";
import { COMPACTION_QUEUE, serviceKeys } from "../../src/queue/queueNames.js";
import { conversation, reactTurn } from "../helpers/conversations.js";
import { deleteKeysUnder } from "../helpers/redisTestPrefix.js";
import { bearer, serviceConfig } from "../helpers/serviceConfig.js";
import { storedJobData, storedPayload } from "../helpers/storedJob.js";

/** Enough history outside a 4000-token keep-recent budget (window 20000, reserve 4000) to compact. */
function longConversation(): unknown[] {
  return conversation(...Array.from({ length: 5 }, () => reactTurn({ rounds: 3, toolResultChars: 2_000 })));
}

function compactable(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { messages: longConversation(), contextWindow: 20_000, settings: { reserveTokens: 4_000 }, ...extra };
}

interface Harness {
  readonly app: FastifyInstance;
  readonly config: Config;
  readonly metrics: Metrics;
  close(): Promise<void>;
}

async function harness(name: string, env: Record<string, string> = {}): Promise<Harness> {
  const config = serviceConfig(name, env);
  const metrics = createMetrics();
  const app = await buildApp(config, {
    metrics,
    // callbacks.example stands for a public name that resolves to loopback.
    resolveHost: async (host) =>
      host === "callbacks.example" ? [{ address: "127.0.0.1", family: 4 }] : [{ address: "93.184.215.14", family: 4 }],
  });
  return {
    app,
    config,
    metrics,
    async close() {
      await app.close();
      await deleteKeysUnder(config.queuePrefix);
    },
  };
}

function post(app: FastifyInstance, body: unknown, headers: Record<string, string> = bearer("acme")) {
  return app.inject({ method: "POST", url: "/v1/compactions", headers, payload: body as Record<string, unknown> });
}

/** A greeting before a pasted text of about 60,000 tokens: nothing to compact (the greeting cannot shrink), far above a 32,000-token window. */
function greetingThenPaste(): unknown[] {
  return [
    { role: "user", content: "hi" },
    { role: "assistant", content: "hello" },
    { role: "user", content: "word ".repeat(60_000) },
  ];
}

/** `compactd_still_above_threshold_total{reason}` as the API's /metrics shows it. */
async function stillAboveThresholdCount(reason: string): Promise<number> {
  const scraped = (await h.app.inject({ method: "GET", url: "/metrics" })).body;
  const line = new RegExp(`^compactd_still_above_threshold_total\\{reason="${reason}"\\} (\\d+)$`, "m").exec(scraped);
  if (line === null) throw new Error(`the API exports no compactd_still_above_threshold_total for reason ${reason}`);
  return Number(line[1]);
}

let h: Harness;
beforeAll(async () => {
  h = await harness("api");
});
afterAll(async () => {
  await h.close();
});

describe("authentication and tenancy", () => {
  it("refuses a request without a Bearer key, saying how to send one", async () => {
    const response = await post(h.app, compactable(), {});
    expect(response.statusCode).toBe(401);
    expect(response.headers["www-authenticate"]).toContain("Bearer");
    expect(response.json().error.code).toBe("unauthorized");
  });

  it("refuses an unknown key", async () => {
    const response = await post(h.app, compactable(), { authorization: "Bearer key-acmf" });
    expect(response.statusCode).toBe(401);
  });

  it("answers health, readiness, metrics and the contract without a key", async () => {
    for (const url of ["/healthz", "/readyz", "/metrics", "/openapi.json"]) {
      expect((await h.app.inject({ method: "GET", url })).statusCode, url).toBe(200);
    }
  });

  it("hides a tenant's job from another tenant as if it did not exist", async () => {
    const created = await post(h.app, compactable());
    const id = created.json().id as string;
    const asGlobex = await h.app.inject({ method: "GET", url: `/v1/compactions/${id}`, headers: bearer("globex") });
    expect(asGlobex.statusCode).toBe(404);
    const cancelAsGlobex = await h.app.inject({ method: "DELETE", url: `/v1/compactions/${id}`, headers: bearer("globex") });
    expect(cancelAsGlobex.statusCode).toBe(404);
    const asAcme = await h.app.inject({ method: "GET", url: `/v1/compactions/${id}`, headers: bearer("acme") });
    expect(asAcme.json().status).toBe("queued");
  });
});

describe("POST /v1/compactions", () => {
  it("answers nothing_to_compact at once, without queuing a job, when everything fits the keep-recent budget", async () => {
    const response = await post(h.app, { messages: reactTurn({ rounds: 1, toolResultChars: 50 }), contextWindow: 200_000 });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ status: "nothing_to_compact", stillAboveThreshold: false });
    const metrics = await h.metrics.registry.getSingleMetricAsString("compactd_jobs_total");
    expect(metrics).toMatch(/compactd_jobs_total\{reason="manual",outcome="nothing_to_compact"\} [1-9]/);
  });

  it("says when nothing to compact leaves the context above the threshold (a greeting before a paste larger than the window), and counts it", async () => {
    const before = await stillAboveThresholdCount("overflow");
    const response = await post(h.app, { messages: greetingThenPaste(), contextWindow: 32_000, reason: "overflow" });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ status: "nothing_to_compact", stillAboveThreshold: true });
    expect(await stillAboveThresholdCount("overflow")).toBe(before + 1);
    // One below the threshold is not counted.
    await post(h.app, { messages: reactTurn({ rounds: 1, toolResultChars: 50 }), contextWindow: 200_000, reason: "overflow" });
    expect(await stillAboveThresholdCount("overflow")).toBe(before + 1);
  });

  it("queues a compaction and points at it", async () => {
    const response = await post(h.app, compactable({ reason: "overflow", conversationId: "conv-queue", metadata: { agent: "a1" } }));
    expect(response.statusCode).toBe(202);
    const { id, status } = response.json();
    expect(status).toBe("queued");
    expect(response.headers.location).toBe(`/v1/compactions/${id}`);
    const view = (await h.app.inject({ method: "GET", url: `/v1/compactions/${id}`, headers: bearer("acme") })).json();
    expect(view).toMatchObject({
      id,
      status: "queued",
      reason: "overflow",
      conversationId: "conv-queue",
      attempts: 0,
      startedAt: null,
      finishedAt: null,
      metadata: { agent: "a1" },
    });
    expect(Date.parse(view.createdAt)).not.toBeNaN();
  });

  it("returns the same job for a repeated Idempotency-Key", async () => {
    const headers = { ...bearer("acme"), "idempotency-key": "retry-1" };
    const body = compactable();
    const first = await post(h.app, body, headers);
    const second = await post(h.app, body, headers);
    expect(first.statusCode).toBe(202);
    expect(second.statusCode).toBe(202);
    expect(second.json().id).toBe(first.json().id);
    expect(second.headers["idempotent-replayed"]).toBe("true");
    // A replay answers like the original, so a client that lost the first answer loses nothing.
    expect(second.headers.location).toBe(first.headers.location);
    expect(second.json()).toEqual(first.json());
  });

  it("refuses an Idempotency-Key reused for a different request", async () => {
    const headers = { ...bearer("acme"), "idempotency-key": "retry-2" };
    await post(h.app, compactable({ conversationId: "a" }), headers);
    const reused = await post(h.app, compactable({ conversationId: "b" }), headers);
    expect(reused.statusCode).toBe(422);
    expect(reused.json().error).toMatchObject({ code: "idempotency_key_reused", field: "Idempotency-Key" });
  });

  it("refuses an Idempotency-Key reused for a different request after its job was cancelled, and replays it for the same one", async () => {
    const headers = { ...bearer("acme"), "idempotency-key": "retry-after-cancel" };
    const body = compactable({ conversationId: "cancelled-then-reused" });
    const first = await post(h.app, body, headers);
    expect(first.statusCode).toBe(202);
    const cancel = await h.app.inject({ method: "DELETE", url: `/v1/compactions/${first.json().id as string}`, headers: bearer("acme") });
    expect(cancel.json().status).toBe("cancelled");
    const same = await post(h.app, body, headers);
    expect(same.statusCode).toBe(202);
    expect(same.json()).toEqual({ id: first.json().id, status: "cancelled" });
    const other = await post(h.app, compactable({ conversationId: "another" }), headers);
    expect(other.statusCode).toBe(422);
    expect(other.json().error.code).toBe("idempotency_key_reused");
  });

  it("refuses a second compaction of a conversation in flight with 409 naming the first job", async () => {
    const first = await post(h.app, compactable({ conversationId: "conv-busy" }));
    const second = await post(h.app, compactable({ conversationId: "conv-busy" }));
    expect(second.statusCode).toBe(409);
    expect(second.json().error).toMatchObject({ code: "compaction_in_flight", jobId: first.json().id });
    expect(second.json().error.message).toContain(first.json().id);
  });

  it("refuses a conversationId that is not well-formed Unicode (a lone surrogate), naming the field, in a single request and in a batch", async () => {
    // Valid JSON, but text UTF-8 cannot carry: hashed into the conversation's
    // in-flight key, every lone surrogate became U+FFFD, and two different
    // conversations shared one key (the second was refused as in flight).
    for (const loneSurrogate of ["\\ud800", "\\udbff", "conv-\\udc00-x"]) {
      const body = JSON.stringify(compactable()).replace(/^\{/, `{"conversationId":"${loneSurrogate}",`);
      const single = await h.app.inject({ method: "POST", url: "/v1/compactions", headers: { ...bearer("acme"), "content-type": "application/json" }, payload: body });
      expect(single.statusCode, single.body).toBe(400);
      expect(single.json().error).toMatchObject({ code: "invalid_request", field: "conversationId" });
      expect(single.json().error.message).toMatch(/well-formed|surrogate/);

      const batch = JSON.stringify({ items: [compactable()] }).replace('{"items":[{', `{"items":[{"conversationId":"${loneSurrogate}",`);
      const batched = await h.app.inject({ method: "POST", url: "/v1/compactions/batch", headers: { ...bearer("acme"), "content-type": "application/json" }, payload: batch });
      expect(batched.statusCode, batched.body).toBe(400);
      expect(batched.json().error).toMatchObject({ code: "invalid_request", field: "items[0].conversationId" });
    }
    // A surrogate pair is a well-formed character like any other.
    expect((await post(h.app, compactable({ conversationId: "conv-\u{1F600}" }))).statusCode).toBe(202);
  });

  it("lets two tenants compact conversations with the same id at once", async () => {
    await post(h.app, compactable({ conversationId: "shared-name" }), bearer("acme"));
    const other = await post(h.app, compactable({ conversationId: "shared-name" }), bearer("globex"));
    expect(other.statusCode).toBe(202);
  });
});

describe("DELETE /v1/compactions/:id", () => {
  it("cancels a queued job, keeps it visible as cancelled and frees its conversation", async () => {
    const created = await post(h.app, compactable({ conversationId: "conv-cancel" }));
    const id = created.json().id as string;
    const cancelled = await h.app.inject({ method: "DELETE", url: `/v1/compactions/${id}`, headers: bearer("acme") });
    expect(cancelled.statusCode).toBe(200);
    expect(cancelled.json()).toMatchObject({ id, status: "cancelled", conversationId: "conv-cancel", error: { code: "cancelled" } });
    const view = await h.app.inject({ method: "GET", url: `/v1/compactions/${id}`, headers: bearer("acme") });
    expect(view.json().status).toBe("cancelled");
    const again = await post(h.app, compactable({ conversationId: "conv-cancel" }));
    expect(again.statusCode).toBe(202);
  });

  it("answers 404 for an id that was never issued", async () => {
    const response = await h.app.inject({ method: "DELETE", url: "/v1/compactions/cmp_nope", headers: bearer("acme") });
    expect(response.statusCode).toBe(404);
    expect(response.json().error.code).toBe("not_found");
  });
});

describe("callback URLs", () => {
  it.each([
    ["http://127.0.0.1:9000/hook", "a loopback literal"],
    ["http://169.254.169.254/latest/meta-data", "the cloud metadata address"],
    ["http://10.1.2.3/hook", "a private address"],
    ["http://[::1]/hook", "IPv6 loopback"],
    ["http://callbacks.example/hook", "a name that resolves to 127.0.0.1"],
    ["ftp://example.com/hook", "a scheme other than http(s)"],
    ["http://hooks.example.com:0/hook", "port 0, which no connection can be made to"],
    ["https://user:secret@hooks.example.com/hook", "credentials in the URL"],
    ["not a url", "text that is not a URL"],
  ])("refuses %s (%s) at submission, naming callbackUrl", async (callbackUrl) => {
    const response = await post(h.app, compactable({ callbackUrl }));
    expect(response.statusCode).toBe(400);
    expect(response.json().error.field).toBe("callbackUrl");
    // The field is named once, in front; the rest says what is wrong with the URL.
    expect(response.json().error.message).toMatch(/^callbackUrl: (?!.*callbackUrl)/);
  });

  it("says what a refused callback address is, naming the field once", async () => {
    const response = await post(h.app, compactable({ callbackUrl: "http://127.0.0.1:9000/hook" }));
    expect(response.json().error.message).toBe(
      "callbackUrl: 127.0.0.1 is a loopback address; only public addresses, or those the operator allows in COMPACTD_CALLBACK_ALLOW, receive callbacks",
    );
  });

  it("accepts a public callback URL", async () => {
    const response = await post(h.app, compactable({ callbackUrl: "https://hooks.example.com/compactd" }));
    expect(response.statusCode).toBe(202);
  });

  it("refuses callbacks when no webhook secret is configured", async () => {
    const bare = await harness("api-nosecret", { COMPACTD_WEBHOOK_SECRET: "" });
    try {
      const response = await post(bare.app, compactable({ callbackUrl: "https://hooks.example.com/compactd" }));
      expect(response.statusCode).toBe(400);
      expect(response.json().error).toMatchObject({ code: "callbacks_disabled", field: "callbackUrl" });
    } finally {
      await bare.close();
    }
  });
});

describe("backpressure", () => {
  it("answers 429 with Retry-After once the backlog reaches its limit", async () => {
    const small = await harness("api-backlog", { COMPACTD_MAX_BACKLOG: "2" });
    try {
      expect((await post(small.app, compactable())).statusCode).toBe(202);
      expect((await post(small.app, compactable())).statusCode).toBe(202);
      const refused = await post(small.app, compactable());
      expect(refused.statusCode).toBe(429);
      expect(Number(refused.headers["retry-after"])).toBeGreaterThan(0);
      expect(refused.json().error.code).toBe("backlog_full");
      // Deciding that there is nothing to compact costs the queue nothing, so it is still answered.
      const nothing = await post(small.app, { messages: reactTurn({ rounds: 1 }), contextWindow: 200_000 });
      expect(nothing.statusCode).toBe(200);
    } finally {
      await small.close();
    }
  });
});

describe("batches", () => {
  it("queues the items that need it, reports the rest, and shows counts by state", async () => {
    const response = await h.app.inject({
      method: "POST",
      url: "/v1/compactions/batch",
      headers: bearer("acme"),
      payload: {
        items: [
          compactable({ conversationId: "b-1" }),
          { messages: reactTurn({ rounds: 1 }), contextWindow: 200_000 },
          compactable({ conversationId: "b-3" }),
          { messages: greetingThenPaste(), contextWindow: 32_000 },
        ],
        metadata: { run: 7 },
      },
    });
    expect(response.statusCode).toBe(202);
    const batch = response.json();
    expect(response.headers.location).toBe(`/v1/batches/${batch.id}`);
    expect(batch.items.map((item: { status: string }) => item.status)).toEqual(["queued", "nothing_to_compact", "queued", "nothing_to_compact"]);
    const nothing = [{ status: "nothing_to_compact", stillAboveThreshold: false }, { status: "nothing_to_compact", stillAboveThreshold: true }];
    expect([batch.items[1], batch.items[3]]).toEqual(nothing);
    const view = await h.app.inject({ method: "GET", url: `/v1/batches/${batch.id}`, headers: bearer("acme") });
    expect(view.json()).toMatchObject({ status: "running", counts: { queued: 2, nothing_to_compact: 2 }, metadata: { run: 7 } });
    expect([view.json().items[1], view.json().items[3]]).toEqual(nothing);
    const asGlobex = await h.app.inject({ method: "GET", url: `/v1/batches/${batch.id}`, headers: bearer("globex") });
    expect(asGlobex.statusCode).toBe(404);
  });

  it("returns the same batch for a repeated Idempotency-Key, without queuing its items again", async () => {
    const headers = { ...bearer("acme"), "idempotency-key": "nightly-2026-11-30" };
    const payload = { items: [compactable({ conversationId: "idem-batch-1" }), compactable({ conversationId: "idem-batch-2" })] };
    const first = await h.app.inject({ method: "POST", url: "/v1/compactions/batch", headers, payload });
    const second = await h.app.inject({ method: "POST", url: "/v1/compactions/batch", headers, payload });
    expect(second.statusCode).toBe(202);
    expect(second.json().id).toBe(first.json().id);
    expect(second.json().items).toEqual(first.json().items);
    expect(second.headers["idempotent-replayed"]).toBe("true");
    // A replay answers like the original, so a client that lost the first answer loses nothing.
    expect(first.headers.location).toBe(`/v1/batches/${first.json().id}`);
    expect(second.headers.location).toBe(first.headers.location);
  });

  it("stores each queued item's payload once, and leaves no payload behind when a replay of the batch races it", async () => {
    const headers = { ...bearer("acme"), "idempotency-key": "raced-batch" };
    const payload = { items: [compactable({ conversationId: "race-1" }), compactable({ conversationId: "race-2" })] };
    const send = () => h.app.inject({ method: "POST", url: "/v1/compactions/batch", headers, payload });
    const [first, second] = await Promise.all([send(), send()]);
    expect([first.statusCode, second.statusCode]).toEqual([202, 202]);
    expect(second.json().id).toBe(first.json().id);
    // Whichever lost the race answers as a replay of the other, Location included.
    expect(second.headers.location).toBe(first.headers.location);
    expect([first.headers["idempotent-replayed"], second.headers["idempotent-replayed"]].filter((h) => h === "true")).toHaveLength(1);
    const ids = (first.json().items as { id: string }[]).map((item) => item.id);
    for (const [index, id] of ids.entries()) {
      const stored = (await storedPayload(h.config, id, await storedJobData(h.config, id))) as { messages: unknown[] };
      expect(stored.messages).toEqual(payload.items[index]!.messages);
    }
    // Every payload key under the prefix belongs to a queued job, and every queued job has one.
    const keys = serviceKeys(h.config.queuePrefix);
    const redis = new Redis(h.config.redisUrl);
    const queue = new Queue<CompactionJobData>(COMPACTION_QUEUE, { connection: { url: h.config.redisUrl }, prefix: h.config.queuePrefix });
    try {
      const queued = await queue.getJobs(["waiting", "prioritized", "delayed", "active"]);
      const expected = queued.map((job) => keys.payload(job.id!, job.data.submissionId)).sort();
      expect((await redis.keys(`${h.config.queuePrefix}:store:payload:*`)).sort()).toEqual(expected);
      expect(expected.length).toBeGreaterThanOrEqual(ids.length);
    } finally {
      await queue.close();
      redis.disconnect();
    }
  });

  it("refuses the whole batch when one item is malformed, naming the item's field", async () => {
    const response = await h.app.inject({
      method: "POST",
      url: "/v1/compactions/batch",
      headers: bearer("acme"),
      payload: { items: [compactable(), { messages: [{ role: "robot", content: "hi" }], contextWindow: 1000 }] },
    });
    expect(response.statusCode).toBe(400);
    expect(response.json().error.field).toMatch(/^items\[1\]\.messages\[0\]/);
  });

  it("refuses more items than the configured limit", async () => {
    const items = Array.from({ length: h.config.maxBatchItems + 1 }, () => ({ messages: [], contextWindow: 1000 }));
    const response = await h.app.inject({ method: "POST", url: "/v1/compactions/batch", headers: bearer("acme"), payload: { items } });
    expect(response.statusCode).toBe(400);
    expect(response.json().error.field).toBe("items");
  });
});
