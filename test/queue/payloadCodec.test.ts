import { randomBytes, randomUUID } from "node:crypto";
import { brotliCompressSync, constants } from "node:zlib";
import fc from "fast-check";
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { replacesOf } from "../../src/core/replaces.js";
import { newJobId } from "../../src/queue/compactionJob.js";
import type { CompactionQueue } from "../../src/queue/compactionQueue.js";
import { decodePayload, encodePayload, encodePayloadBytes, windowBitsFor } from "../../src/queue/payloadCodec.js";
import { PayloadStore, submitWithPayload } from "../../src/queue/payloadStore.js";
import { COMPACTION_QUEUE, serviceKeys } from "../../src/queue/queueNames.js";
import { claudeCodeSessionFiles, loadClaudeCodeSession } from "../helpers/corpus.js";
import { openTestQueue, type TestQueue } from "../helpers/testQueue.js";

/** The leading messages of a real Claude Code session, about `bytes` of JSON. */
function realConversationOf(bytes: number): { messages: unknown[] } {
  for (const file of claudeCodeSessionFiles()) {
    const { messages } = loadClaudeCodeSession(file);
    if (JSON.stringify(messages).length < bytes) continue;
    const kept: unknown[] = [];
    let size = 0;
    for (const message of messages) {
      if (size >= bytes) break;
      kept.push(message);
      size += JSON.stringify(message).length;
    }
    return { messages: kept };
  }
  throw new Error(`no corpus session has ${bytes} bytes of messages`);
}

describe("payload codec", () => {
  it("gives back exactly the JSON value it was given", async () => {
    await fc.assert(
      fc.asyncProperty(fc.jsonValue(), async (value) => {
        expect(decodePayload(encodePayload(value))).toEqual(JSON.parse(JSON.stringify(value)));
      }),
      { numRuns: 50 },
    );
  });

  it("sizes brotli's window to the text, not to brotli's 4 MB default", async () => {
    for (const bytes of [0, 1, 1_000, 100_000, 3_000_000, 40_000_000]) {
      const text = Buffer.from(JSON.stringify({ messages: ["x".repeat(bytes)] }));
      const packed = encodePayloadBytes(text);
      const window = declaredWindowBits(packed);
      // The window the stream declares holds the whole text, and no window half its size would.
      expect(2 ** window - 16, `${text.length} bytes`).toBeGreaterThanOrEqual(Math.min(text.length, 2 ** 24 - 16));
      if (window > 10) expect(2 ** (window - 1) - 16, `${text.length} bytes`).toBeLessThan(text.length);
      expect(window).toBe(windowBitsFor(text.length));
      expect(decodePayload(packed)).toEqual(JSON.parse(text.toString()));
    }
  });

  it("compresses a queued conversation at quality 4, and at 5 only when 4 leaves more than a quarter of it", () => {
    const atQuality = (json: Buffer, quality: number): Buffer =>
      brotliCompressSync(json, {
        params: {
          [constants.BROTLI_PARAM_QUALITY]: quality,
          [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
          [constants.BROTLI_PARAM_SIZE_HINT]: json.length,
          [constants.BROTLI_PARAM_LGWIN]: windowBitsFor(json.length),
        },
      });
    // Agent transcript text: quality 4 already leaves less than a quarter.
    const transcript = Buffer.from(JSON.stringify(realConversationOf(100_000)));
    expect(atQuality(transcript, 4).length).toBeLessThan(transcript.length / 4);
    expect(encodePayloadBytes(transcript).equals(atQuality(transcript, 4))).toBe(true);
    // Signatures and other random text do not compress that far: quality 5 gets what it can.
    const signatures = Buffer.from(JSON.stringify({ messages: [{ role: "assistant", content: [{ type: "thinking", thinking: "x", signature: randomBytes(60_000).toString("base64") }] }] }));
    expect(atQuality(signatures, 4).length).toBeGreaterThan(signatures.length / 4);
    expect(encodePayloadBytes(signatures).equals(atQuality(signatures, 5))).toBe(true);
  });

  it("rejects a payload it did not produce", async () => {
    expect(() => decodePayload("bm90IGJyb3RsaQ==")).toThrow();
  });

  describe("in Redis", () => {
    let testQueue: TestQueue;
    let prefix: string;
    let redis: Redis;
    let queue: CompactionQueue;

    beforeAll(async () => {
      testQueue = await openTestQueue("codec");
      ({ prefix, redis, queue } = testQueue);
    });

    afterAll(() => testQueue.close());

    it("keeps a queued 100 KB conversation, job and payload key together, in at most 30% of its JSON", async () => {
      const conversation = realConversationOf(100_000);
      const raw = Buffer.byteLength(JSON.stringify(conversation));
      const id = newJobId();
      const submissionId = randomUUID();
      const payloads = new PayloadStore(redis, serviceKeys(prefix));
      const data = {
        tenant: "acme",
        replaces: replacesOf(conversation.messages),
        contextWindow: 200_000,
        settings: {},
        reason: "threshold" as const,
        conversationId: "conv-1",
        submissionId,
        requestDigest: "d",
      };
      await submitWithPayload(queue, payloads, id, { data, payload: encodePayload(conversation) }, false);
      const usage = async (key: string) => Number(await redis.memory("USAGE", key, "SAMPLES", "0"));
      const hash = await usage(`${prefix}:${COMPACTION_QUEUE}:${id}`);
      const payload = await usage(serviceKeys(prefix).payload(id, submissionId));
      expect(hash).toBeGreaterThan(0);
      expect(payload).toBeGreaterThan(hash);
      expect((hash + payload) / raw).toBeLessThanOrEqual(0.3);
    });
  });
});

/**
 * The window size (WBITS) a brotli stream declares in its first bits (RFC
 * 7932, section 9.1), read least significant bit first.
 */
function declaredWindowBits(stream: Uint8Array): number {
  const bits = stream[0]! | (stream[1]! << 8);
  if ((bits & 1) === 0) return 16;
  const n = (bits >> 1) & 7;
  if (n !== 0) return 17 + n;
  const m = (bits >> 4) & 7;
  if (m === 1) throw new Error("a large-window stream");
  return m === 0 ? 17 : 8 + m;
}
