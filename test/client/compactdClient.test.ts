import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { createServer as createHttpServer, type Server as HttpServer } from "node:http";
import { createServer as createNetServer, type AddressInfo, type Server as NetServer, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  applyCompaction,
  CompactdApiError,
  CompactdClient,
  CompactdConnectionError,
  type CompactdClientOptions,
  type CompactionRequest,
  type Job,
} from "../../src/client/index.js";
import { replacesOf } from "../../src/core/replaces.js";
import { deeplyNestedJson, toolCallWithInput } from "../helpers/deepJson.js";
import { markedConversation } from "../helpers/markedConversation.js";
import { waitUntil } from "../helpers/waitUntil.js";
import { startFlakyProxy, type Fault } from "./flakyProxy.js";
import { startServiceUnderTest, type ServiceUnderTest } from "./serviceUnderTest.js";

/** A conversation most of which lies outside the keep-recent budget. */
function compactable(extra: Partial<CompactionRequest> = {}): CompactionRequest {
  return { messages: markedConversation(`client-${randomUUID()}`), contextWindow: 20_000, settings: { reserveTokens: 4_000 }, ...extra };
}

function caught(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error("expected the call to fail");
    },
    (err: unknown) => err,
  );
}

describe("CompactdClient against a running API and worker", () => {
  let service: ServiceUnderTest;
  let client: CompactdClient;
  beforeAll(async () => {
    service = await startServiceUnderTest("client");
    client = service.client();
  });
  afterAll(async () => {
    await service.close();
  });

  it("compacts and waits for a result whose swap contract covers the request's messages", async () => {
    const request = compactable({ conversationId: "conv-client", metadata: { turn: 7 } });
    const job = await client.compact(request, { wait: 30 });
    expect(job).toMatchObject({ status: "completed", conversationId: "conv-client", metadata: { turn: 7 } });
    const result = (job as Job).result!;
    expect(result.replaces).toEqual(replacesOf(request.messages));
    const appended = { role: "user", content: "and one more thing" };
    expect(applyCompaction([...request.messages, appended], result)).toEqual([...result.messages, appended]);
  });

  it("splices a result into messages holding what an agent framework adds: ids, Date timestamps, cache_control", async () => {
    const sentAt = new Date("2026-12-04T10:00:00.000Z");
    const messages = markedConversation(`framework-${randomUUID()}`).map((message, index) => ({
      ...message,
      id: `msg_${index}`,
      createdAt: sentAt,
      ...(index === 0 && typeof message.content === "string" && { content: [{ type: "text", text: message.content, cache_control: { type: "ephemeral" } }] }),
    }));
    const job = await client.compact({ messages, contextWindow: 20_000, settings: { reserveTokens: 4_000 } }, { wait: 30 });
    const result = (job as Job).result!;
    const appended = { role: "user", content: "and one more thing", id: "msg_new", createdAt: new Date() };
    expect(applyCompaction([...messages, appended], result)).toEqual([...result.messages, appended]);
  });

  it("answers nothing_to_compact without a job when everything fits the keep-recent budget", async () => {
    const outcome = await client.compact({ messages: [{ role: "user", content: "hello" }], contextWindow: 20_000 }, { wait: 30 });
    expect(outcome).toEqual({ status: "nothing_to_compact", stillAboveThreshold: false });
  });

  it("returns a queued job at once without wait, and get follows it to its result", async () => {
    const queued = await client.compact(compactable());
    if (!("id" in queued)) throw new Error("expected a job");
    const job = await client.get(queued.id, { wait: 30 });
    expect(job).toMatchObject({ id: queued.id, status: "completed" });
    expect(job.result?.summary).toContain("## Goal");
  });

  it("queues a batch and reads it until every item has finished", async () => {
    const batch = await client.batch([compactable(), { messages: [{ role: "user", content: "short" }], contextWindow: 20_000 }], {
      metadata: { run: "nightly" },
    });
    expect(batch.items[0]!.id).toMatch(/^cmp_/);
    expect(batch.items[1]).toEqual({ status: "nothing_to_compact", stillAboveThreshold: false });
    let current = batch;
    await waitUntil(async () => (current = await client.getBatch(batch.id)).status === "completed", "the batch completes", 30_000);
    expect(current.counts).toEqual({ completed: 1, nothing_to_compact: 1 });
    expect(current.metadata).toEqual({ run: "nightly" });
  });

  it("refuses to cancel a finished job with the API's job_finished error", async () => {
    const job = await client.compact(compactable(), { wait: 30 });
    if (!("id" in job)) throw new Error("expected a job");
    const error = await caught(client.cancel(job.id));
    expect(error).toBeInstanceOf(CompactdApiError);
    expect(error).toMatchObject({ status: 409, code: "job_finished" });
  });

  it("surfaces a bad request as an error naming the field at fault", async () => {
    const error = await caught(client.compact({ ...compactable(), contextWindow: 0 }));
    expect(error).toMatchObject({ name: "CompactdApiError", status: 400, code: "invalid_request", field: "contextWindow" });
    const orphan = await caught(
      client.compact({
        messages: [{ role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_missing", content: "42" }] }],
        contextWindow: 20_000,
      }),
    );
    expect(orphan).toMatchObject({ status: 400, code: "invalid_conversation", field: "messages[0].content[0].tool_use_id" });
  });

  it("refuses to send a tool input nested 50,000 levels deep, naming the field, instead of overflowing JSON.stringify", async () => {
    const messages = JSON.parse(toolCallWithInput(deeplyNestedJson(50_000))) as unknown[];
    const error = await caught(client.compact({ messages, contextWindow: 20_000 }));
    expect(error).toBeInstanceOf(TypeError);
    expect((error as Error).message).toMatch(/^messages\[1\]\.content\[0\]\.input: nests arrays and objects more than \d+ levels deep/);
  });

  it("surfaces an unknown key as 401 and another tenant's job as 404", async () => {
    const stranger = service.client({ apiKey: "not-a-key" });
    expect(await caught(stranger.get("cmp_00000000000000000000000000000000"))).toMatchObject({ status: 401 });
    const missing = await caught(client.get("cmp_00000000000000000000000000000000"));
    expect(missing).toMatchObject({ status: 404, code: "not_found" });
  });
});

describe("CompactdClient with no worker taking jobs", () => {
  let service: ServiceUnderTest;
  beforeAll(async () => {
    service = await startServiceUnderTest("client-idle", { workers: 0 });
  });
  afterAll(async () => {
    await service.close();
  });

  it("names the compaction in flight when a conversation already has one", async () => {
    const client = service.client();
    const first = await client.compact(compactable({ conversationId: "conv-busy" }));
    if (!("id" in first)) throw new Error("expected a job");
    const error = await caught(client.compact(compactable({ conversationId: "conv-busy" })));
    expect(error).toMatchObject({ status: 409, code: "compaction_in_flight", field: "conversationId", jobId: first.id });
    expect((await client.cancel(first.id)).status).toBe("cancelled");
  });

  it("stops waiting when the wait budget is spent and returns the job as it is", async () => {
    const job = await service.client().compact(compactable(), { wait: 1 });
    expect(job).toMatchObject({ status: "queued" });
  });

  it("cancels a queued job, and cancelling it again answers the same", async () => {
    const client = service.client();
    const queued = await client.compact(compactable());
    if (!("id" in queued)) throw new Error("expected a job");
    const cancelled = await client.cancel(queued.id);
    expect(cancelled).toMatchObject({ id: queued.id, status: "cancelled" });
    expect(await client.cancel(queued.id)).toMatchObject({ status: "cancelled" });
    expect(await client.get(queued.id)).toMatchObject({ status: "cancelled" });
  });
});

describe("CompactdClient against a server that never finishes answering", () => {
  const sockets = new Set<Socket>();
  let silent: NetServer;
  let trickling: HttpServer;
  beforeAll(async () => {
    // Takes the connection and never answers, as a hung process or a black-holing proxy does.
    silent = createNetServer((socket) => sockets.add(socket));
    // Answers 200 at once, then sends the body a byte at a time, for ever.
    trickling = createHttpServer((_request, response) => {
      response.writeHead(200, { "content-type": "application/json" }).write("{");
      const drip = setInterval(() => response.write(" "), 50);
      response.on("close", () => clearInterval(drip));
    });
    trickling.on("connection", (socket) => sockets.add(socket));
    await Promise.all([once(silent.listen(0, "127.0.0.1"), "listening"), once(trickling.listen(0, "127.0.0.1"), "listening")]);
  });
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    silent.close();
    trickling.close();
  });

  const servers = { silent: () => silent, trickling: () => trickling };
  describe.each([
    ["compactd's fetch", undefined],
    ["Node's fetch", globalThis.fetch],
  ])("with %s", (_name, fetch) => {
    it.each(Object.keys(servers))("ends every attempt at its timeout, the wait it asked for included, and says which option ran out (%s)", async (server) => {
      const { port } = servers[server as keyof typeof servers]().address() as AddressInfo;
      const client = new CompactdClient({ baseUrl: `http://127.0.0.1:${port}`, apiKey: "k", timeoutMs: 200, maxRetries: 1, ...(fetch && { fetch }) });
      const reads = [caught(client.get("cmp_1")), caught(client.get("cmp_1", { wait: 1 })), caught(client.compact(compactable()))];
      for (const error of await Promise.all(reads)) {
        expect(error).toBeInstanceOf(CompactdConnectionError);
        expect((error as Error).message).toMatch(/failed after 2 attempts: no answer within .*timeoutMs/);
      }
    });
  });
});

describe("CompactdClient at the API's limit of waiting requests", () => {
  let service: ServiceUnderTest;
  beforeAll(async () => {
    service = await startServiceUnderTest("client-waiters", { workers: 0, env: { COMPACTD_MAX_WAITERS: "1" } });
  });
  afterAll(async () => {
    await service.close();
  });

  it("pauses between reads the API answered early, rather than asking again in a loop", async () => {
    const queued = await service.client().compact(compactable());
    if (!("id" in queued)) throw new Error("expected a job");
    const proxy = await startFlakyProxy(service.url, () => undefined);
    const client = service.client({ baseUrl: proxy.url });
    const holder = new AbortController();
    try {
      // Two agents wait on the job and one API process holds one of them: whichever is not held is answered at once, each time it asks.
      const held = caught(client.get(queued.id, { wait: 5, signal: holder.signal }));
      const job = await client.get(queued.id, { wait: 3 });
      expect(job).toMatchObject({ id: queued.id, status: "queued" });
      holder.abort(new Error("done"));
      await held;
      // Held, a wait of 3 s is one or two requests; answered early, a few a second: not hundreds.
      expect(proxy.requests.length).toBeLessThan(12);
    } finally {
      holder.abort(new Error("done"));
      await proxy.close();
    }
  });
});

describe("CompactdClient retries", () => {
  let service: ServiceUnderTest;
  beforeAll(async () => {
    service = await startServiceUnderTest("client-retry", { workers: 0 });
  });
  afterAll(async () => {
    await service.close();
  });

  async function throughProxy(faultFor: (index: number) => Fault | undefined, options: Partial<CompactdClientOptions> = {}) {
    const proxy = await startFlakyProxy(service.url, (_, index) => faultFor(index));
    return { proxy, client: service.client({ baseUrl: proxy.url, ...options }) };
  }

  it("retries a submission refused with 503 after the Retry-After it was given, with the same Idempotency-Key", async () => {
    const { proxy, client } = await throughProxy((index) => (index === 0 ? { kind: "status", status: 503, retryAfter: "1" } : undefined));
    try {
      const queued = await client.compact(compactable());
      expect(queued).toMatchObject({ status: "queued" });
      const [refused, retried] = proxy.requests;
      expect(proxy.requests).toHaveLength(2);
      expect(retried!.headers["idempotency-key"]).toBe(refused!.headers["idempotency-key"]);
      expect(retried!.at - refused!.at).toBeGreaterThanOrEqual(1_000);
    } finally {
      await proxy.close();
    }
  });

  it("makes one job of a submission whose answer was lost after the API queued it", async () => {
    const { proxy, client } = await throughProxy((index) => (index === 0 ? { kind: "dropAfterForwarding" } : undefined));
    try {
      const queued = await client.compact(compactable());
      if (!("id" in queued)) throw new Error("expected a job");
      const lost = JSON.parse(proxy.requests[0]!.upstream!.body) as { id: string };
      expect(queued.id).toBe(lost.id);
      expect(proxy.requests[1]!.upstream!.status).toBe(202);
      await client.cancel(queued.id);
    } finally {
      await proxy.close();
    }
  });

  it("retries reads after a dropped connection", async () => {
    const { proxy, client } = await throughProxy((index) => (index < 2 ? { kind: "dropBeforeForwarding" } : undefined));
    try {
      expect(await caught(client.get("cmp_00000000000000000000000000000000"))).toMatchObject({ status: 404 });
      expect(proxy.requests).toHaveLength(3);
    } finally {
      await proxy.close();
    }
  });

  it("passes a 5xx other than 503 on at once, as the README says: only 503 and 429 say \"not now\"", async () => {
    const { proxy, client } = await throughProxy((index) => ({ kind: "status", status: index === 0 ? 502 : 500 }));
    try {
      expect(await caught(client.compact(compactable()))).toMatchObject({ status: 502 });
      expect(await caught(client.get("cmp_00000000000000000000000000000000"))).toMatchObject({ status: 500 });
      expect(proxy.requests).toHaveLength(2);
    } finally {
      await proxy.close();
    }
  });

  it("gives up at once when Retry-After asks for longer than it is willing to wait", async () => {
    const { proxy, client } = await throughProxy(() => ({ kind: "status", status: 503, retryAfter: "3600" }));
    try {
      const error = await caught(client.compact(compactable()));
      expect(error).toMatchObject({ status: 503, code: "unavailable" });
      expect(proxy.requests).toHaveLength(1);
    } finally {
      await proxy.close();
    }
  });

  it("reports an unreachable service after its retries as a connection error", async () => {
    const { proxy, client } = await throughProxy(() => ({ kind: "dropBeforeForwarding" }), { maxRetries: 2 });
    try {
      const error = await caught(client.get("cmp_00000000000000000000000000000000"));
      expect(error).toBeInstanceOf(CompactdConnectionError);
      expect((error as Error).message).toMatch(/failed after 3 attempts/);
      expect(proxy.requests).toHaveLength(3);
    } finally {
      await proxy.close();
    }
  });

  it("passes the backlog's 429 on when its Retry-After is past the client's limit", async () => {
    const full = await startServiceUnderTest("client-backlog", { workers: 0, env: { COMPACTD_MAX_BACKLOG: "1" } });
    try {
      const client = full.client({ maxRetryDelayMs: 1_000 });
      await client.compact(compactable());
      const error = await caught(client.compact(compactable()));
      expect(error).toMatchObject({ status: 429, code: "backlog_full" });
    } finally {
      await full.close();
    }
  });

  it("stops retrying when the caller aborts", async () => {
    const { proxy, client } = await throughProxy(() => ({ kind: "status", status: 503, retryAfter: "5" }));
    try {
      const controller = new AbortController();
      const call = caught(client.get("cmp_00000000000000000000000000000000", { signal: controller.signal }));
      await waitUntil(() => proxy.requests.length === 1, "the first attempt arrives");
      controller.abort(new Error("the agent moved on"));
      expect(await call).toMatchObject({ message: "the agent moved on" });
      expect(proxy.requests).toHaveLength(1);
    } finally {
      await proxy.close();
    }
  });
});
