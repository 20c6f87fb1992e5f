import { randomBytes, randomUUID } from "node:crypto";
import fc from "fast-check";
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compress as zstdCompress } from "zstd-napi";
import { replacesOf } from "../../src/core/replaces.js";
import { newJobId } from "../../src/queue/compactionJob.js";
import type { CompactionQueue } from "../../src/queue/compactionQueue.js";
import { decodePayload, encodeJson, encodeJsonText, encodePayload, inflatePayload } from "../../src/queue/payloadCodec.js";
import { PayloadStore, submitWithPayload } from "../../src/queue/payloadStore.js";
import { COMPACTION_QUEUE, serviceKeys } from "../../src/queue/queueNames.js";
import { claudeCodeSessionFiles, loadClaudeCodeSession } from "../helpers/corpus.js";
import { earlierBrotli } from "../helpers/earlierBrotli.js";
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

/** A few KB of consecutive messages of a real Claude Code session, none of them large. */
function shortRealConversation(): { messages: unknown[] } {
  for (const file of claudeCodeSessionFiles()) {
    let kept: unknown[] = [];
    let size = 0;
    for (const message of loadClaudeCodeSession(file).messages) {
      const bytes = JSON.stringify(message).length;
      if (bytes > 2_000) {
        kept = [];
        size = 0;
        continue;
      }
      kept.push(message);
      size += bytes;
      if (size >= 6_000) return { messages: kept };
    }
  }
  throw new Error("no corpus session has 6 KB of short messages in a row");
}

/** A value's JSON as the bytes the codec takes. */
const jsonOf = (value: unknown): Buffer => Buffer.from(JSON.stringify(value), "utf8");

describe("payload codec", () => {
  it("gives back exactly the JSON value it was given", async () => {
    await fc.assert(
      fc.asyncProperty(fc.jsonValue(), async (value) => {
        expect(decodePayload(encodePayload(jsonOf(value)))).toEqual(JSON.parse(JSON.stringify(value)));
      }),
      { numRuns: 50 },
    );
  });

  it("compresses a queued conversation at zstd level 3, and at 9 only when 3 leaves more than a quarter of it", () => {
    const atLevel = (json: Buffer, level: number): Buffer => zstdCompress(json, { compressionLevel: level, checksumFlag: true });
    // Agent transcript text: level 3 already leaves less than a quarter.
    const transcript = Buffer.from(JSON.stringify(realConversationOf(100_000)));
    expect(atLevel(transcript, 3).length).toBeLessThan(transcript.length / 4);
    expect(encodePayload(transcript).equals(atLevel(transcript, 3))).toBe(true);
    // Signatures and other random text do not compress that far: level 9 gets what it can.
    const signatures = Buffer.from(JSON.stringify({ messages: [{ role: "assistant", content: [{ type: "thinking", thinking: "x", signature: randomBytes(60_000).toString("base64") }] }] }));
    expect(atLevel(signatures, 3).length).toBeGreaterThan(signatures.length / 4);
    expect(encodePayload(signatures).equals(atLevel(signatures, 9))).toBe(true);
  });

  it("compresses a conversation under 16 KiB once, at level 3, however much of it that leaves", () => {
    const atLevel = (json: Buffer, level: number): Buffer => zstdCompress(json, { compressionLevel: level, checksumFlag: true });
    // A short stretch of a real session: level 3 leaves more than a quarter, and level 9 would still.
    const short = Buffer.from(JSON.stringify(shortRealConversation()));
    expect(short.length).toBeLessThan(16 * 1024);
    expect(atLevel(short, 3).length).toBeGreaterThan(short.length / 4);
    expect(atLevel(short, 9).length).toBeGreaterThan(short.length / 4);
    expect(encodePayload(short).equals(atLevel(short, 3))).toBe(true);
    // At 16 KiB the fallback runs again.
    const signatures = Buffer.from(JSON.stringify({ messages: [{ role: "assistant", content: [{ type: "thinking", thinking: "x", signature: randomBytes(12 * 1024).toString("base64") }] }] }));
    expect(signatures.length).toBeGreaterThanOrEqual(16 * 1024);
    expect(encodePayload(signatures).equals(atLevel(signatures, 9))).toBe(true);
  });

  it("compresses a result at zstd level 6", () => {
    const text = JSON.stringify(realConversationOf(50_000));
    expect(encodeJsonText(text).equals(zstdCompress(Buffer.from(text), { compressionLevel: 6, checksumFlag: true }))).toBe(true);
    expect(inflatePayload(encodeJson(text)).toString()).toBe(text);
  });

  it("reads the brotli that earlier versions wrote, raw or as base64, whatever its window", async () => {
    await fc.assert(
      fc.property(
        // Lengths around the largest text a 64 KB window was fitted to, and a few up to the default window's.
        fc.oneof(fc.integer({ min: 0, max: 2_000 }), fc.integer({ min: 65_000, max: 66_000 }), fc.integer({ min: 66_000, max: 5_000_000 })),
        fc.constantFrom(4, 5),
        fc.boolean(),
        (length, quality, fittedWindow) => {
          const text = Buffer.from(JSON.stringify({ messages: [randomBytes(Math.ceil(length * 0.375)).toString("base64").slice(0, length)] }));
          const legacy = earlierBrotli(text, quality, fittedWindow);
          // Never mistaken for a zstd frame: that needs the first byte 0x28.
          expect(legacy[0]).not.toBe(0x28);
          expect(inflatePayload(legacy).equals(text)).toBe(true);
          expect(inflatePayload(legacy.toString("base64")).equals(text)).toBe(true);
        },
      ),
      { numRuns: 40 },
    );
  });

  it("rejects a payload it did not produce, or one damaged in store", async () => {
    expect(() => decodePayload("bm90IGJyb3RsaQ==")).toThrow();
    const packed = encodePayload(jsonOf(realConversationOf(20_000)));
    expect(() => decodePayload(packed.subarray(0, packed.length - 10))).toThrow();
    const flipped = Buffer.from(packed);
    flipped[Math.floor(flipped.length / 2)]! ^= 0x10;
    expect(() => decodePayload(flipped)).toThrow();
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
      await submitWithPayload(queue, payloads, id, { data, payload: encodePayload(jsonOf(conversation)) }, false);
      const usage = async (key: string) => Number(await redis.memory("USAGE", key, "SAMPLES", "0"));
      const hash = await usage(`${prefix}:${COMPACTION_QUEUE}:${id}`);
      const payload = await usage(serviceKeys(prefix).payload(id, submissionId));
      expect(hash).toBeGreaterThan(0);
      expect(payload).toBeGreaterThan(hash);
      expect((hash + payload) / raw).toBeLessThanOrEqual(0.3);
    });
  });
});
