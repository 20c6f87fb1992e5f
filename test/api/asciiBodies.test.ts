/**
 * What the API stores of a request body, and what the worker makes of it:
 * the conversation as sent, whatever characters it holds and whether it
 * opens with a byte-order mark. The stored JSON is ASCII when the body is
 * mostly ASCII (src/api/asciiJson.ts), the body as it came otherwise; either
 * way the worker compacts exactly the messages the agent sent.
 */
import { isAscii } from "node:buffer";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inflatePayload } from "../../src/queue/payloadCodec.js";
import { PayloadStore } from "../../src/queue/payloadStore.js";
import { serviceKeys } from "../../src/queue/queueNames.js";
import { markedConversation } from "../helpers/markedConversation.js";
import { bearer } from "../helpers/serviceConfig.js";
import { startServiceHarness, type ServiceHarness } from "../helpers/serviceHarness.js";
import { storedJobData } from "../helpers/storedJob.js";

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/** A compactable conversation whose last message (kept verbatim by the compaction) holds `text`, and every user request too. */
function requestWith(text: string): { messages: unknown[]; contextWindow: number; settings: { reserveTokens: number } } {
  const messages = markedConversation(text).map((m) => (m.role === "user" && typeof m.content === "string" ? { ...m, content: `${m.content} ${text}` } : m));
  return { messages: [...messages, { role: "user", content: `the last word: ${text}` }], contextWindow: 20_000, settings: { reserveTokens: 4_000 } };
}

async function post(h: ServiceHarness, bytes: Buffer): Promise<{ status: number; id: string }> {
  const response = await h.app.inject({
    method: "POST",
    url: "/v1/compactions",
    headers: { ...bearer("acme"), "content-type": "application/json" },
    payload: bytes,
  });
  return { status: response.statusCode, id: String(response.json().id) };
}

/** The stored payload's JSON text, as the worker decompresses it. */
async function storedText(h: ServiceHarness, id: string): Promise<Buffer> {
  const data = await storedJobData(h.config, id);
  const redis = new Redis(h.config.redisUrl);
  try {
    const packed = await new PayloadStore(redis, serviceKeys(h.config.queuePrefix)).read(id, data);
    if (packed === undefined) throw new Error(`job ${id} has no payload`);
    return inflatePayload(packed);
  } finally {
    redis.disconnect();
  }
}

interface Case {
  readonly request: ReturnType<typeof requestWith>;
  readonly bytes: Buffer;
}

const CASES = {
  accents: body(requestWith("café → naïve 😀 日本")),
  bom: body(requestWith("plain"), BOM),
  bomAndAccents: body(requestWith("crème brûlée ✓"), BOM),
  chinese: body(requestWith("这是一个关于上下文压缩的测试消息，包含中文字符。".repeat(40))),
} satisfies Record<string, Case>;

function body(request: ReturnType<typeof requestWith>, prefix: Buffer = Buffer.alloc(0)): Case {
  return { request, bytes: Buffer.concat([prefix, Buffer.from(JSON.stringify(request))]) };
}

/** A batch's item: its payload is written out by the API (the item's messages, format and system), and taken in like a body. */
const BATCH_ITEM = requestWith("Zürich ≠ 東京 🚀");

type Name = keyof typeof CASES | "batchItem";

interface Taken {
  readonly stored: Map<Name, Buffer>;
  readonly results: Map<Name, { status: unknown; result: { messages: unknown[]; degraded: boolean } }>;
}

/**
 * Queues every case and reads its payload before a worker runs (a worker
 * deletes a payload once its job settles); then one worker compacts them all.
 */
async function takeIn(h: ServiceHarness): Promise<Taken> {
  const taken: Taken = { stored: new Map(), results: new Map() };
  const ids = new Map<Name, string>();
  for (const [name, { bytes }] of Object.entries(CASES) as [keyof typeof CASES, Case][]) {
    const { status, id } = await post(h, bytes);
    expect(status).toBe(202);
    ids.set(name, id);
    taken.stored.set(name, await storedText(h, id));
  }
  const batch = await h.app.inject({
    method: "POST",
    url: "/v1/compactions/batch",
    headers: { ...bearer("acme"), "content-type": "application/json" },
    payload: Buffer.from(JSON.stringify({ items: [BATCH_ITEM] })),
  });
  expect(batch.statusCode).toBe(202);
  const itemId = String((batch.json() as { items: { id: string }[] }).items[0]!.id);
  ids.set("batchItem", itemId);
  taken.stored.set("batchItem", await storedText(h, itemId));
  await h.startWorker();
  for (const [name, id] of ids) taken.results.set(name, (await h.view(id, 30)) as never);
  return taken;
}

/** Checks the compaction of `name` completed and kept the request's last message unchanged. */
function compactedAsSent({ results }: Taken, name: Name): void {
  const view = results.get(name)!;
  expect(view.status).toBe("completed");
  expect(view.result.degraded).toBe(false);
  const request = name === "batchItem" ? BATCH_ITEM : CASES[name].request;
  expect(view.result.messages.at(-1)).toEqual(request.messages.at(-1));
}

// Bodies under COMPACTD_INTAKE_THREAD_MIN_BYTES are taken in on the event loop, larger ones on an intake thread: both ways.
describe.each([
  ["on the event loop", {}],
  ["on an intake thread", { COMPACTD_INTAKE_THREAD_MIN_BYTES: "1" }],
])("a request body taken in %s", (where, env) => {
  let h: ServiceHarness;
  let taken: Taken;
  beforeAll(async () => {
    h = await startServiceHarness(`ascii-bodies-${where.replaceAll(" ", "-")}`, { workers: 0, env });
    taken = await takeIn(h);
  });
  afterAll(async () => {
    await h.close();
  });

  it("mostly ASCII, with accents, symbols and astral characters, is stored as ASCII JSON and compacted as sent", () => {
    expect(isAscii(taken.stored.get("accents")!)).toBe(true);
    expect(JSON.parse(taken.stored.get("accents")!.toString("latin1"))).toEqual(CASES.accents.request);
    compactedAsSent(taken, "accents");
  });

  it("opening with a UTF-8 byte-order mark is compacted, not failed as undecodable", () => {
    expect(taken.stored.get("bom")!.subarray(0, 3).equals(BOM)).toBe(false);
    compactedAsSent(taken, "bom");
  });

  it("opening with a byte-order mark and holding characters outside ASCII is compacted as sent", () => {
    compactedAsSent(taken, "bomAndAccents");
  });

  it("mostly outside ASCII is stored as it came and compacted as sent", () => {
    expect(taken.stored.get("chinese")!.equals(CASES.chinese.bytes)).toBe(true);
    compactedAsSent(taken, "chinese");
  });

  it("of a batch item, written out by the API, is stored as ASCII JSON too and compacted as sent", () => {
    expect(isAscii(taken.stored.get("batchItem")!)).toBe(true);
    expect(JSON.parse(taken.stored.get("batchItem")!.toString("latin1"))).toEqual({ messages: BATCH_ITEM.messages, format: "auto" });
    compactedAsSent(taken, "batchItem");
  });
});
