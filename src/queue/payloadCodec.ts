/**
 * Compression of the conversations and results the service keeps in Redis
 * (each once: a callback reads the stored result rather than keeping a copy).
 *
 * A queued job carries the whole conversation (100 KB is ordinary, megabytes
 * happen) and Redis holds it in memory until a worker is free, so backlog
 * capacity is set by payload size. Brotli at a middling quality shrinks agent
 * transcripts (prose, code, JSON tool output) to about a quarter in about a
 * millisecond per 100 KB. A queued conversation is stored as those raw bytes,
 * in a key of its own beside its job (payloadStore.ts): in BullMQ's job data,
 * which is JSON text, it would need base64, a third more. What must live in
 * text (results, the inline payloads of jobs queued by earlier versions) is
 * the same bytes as base64, and {@link inflatePayload} reads either form.
 *
 * Everything here is synchronous, on the caller's thread, for two reasons.
 * - It costs less: a 100 KB conversation took 1.29 ms of CPU through zlib's
 *   asynchronous API and 1.08 ms synchronously, the difference being the
 *   round trips between libuv's thread pool and the event loop; under load
 *   the API and the worker each spent about a millisecond less per job
 *   (docs/BENCHMARKS.md, Service). And brotli's state (1–2 MB at quality 5)
 *   is freed when the call returns rather than when the handle is closed
 *   after its last callback, so a process never holds many at once.
 * - A job does not depend on libuv's pool, which a process shares with the
 *   file system and `dns.lookup`. libuv lets lookups take at most half of
 *   it, so a resolver that does not answer only slowed the compressions
 *   down; a file system call that hangs could stop them all
 *   (test/worker/threadPoolHeld.test.ts holds the whole pool through a job).
 * The cost is the event loop's: about a millisecond per 100 KB, in the same
 * stretch as parsing the same JSON (the API's intake, lockForCpuWork.ts in
 * the worker), which takes longer.
 *
 * Brotli's window is sized to each text (see {@link windowBitsFor}), and a
 * decompression's output buffer to the text it will most likely give back
 * (see {@link outputChunkFor}): both defaults suit streams of unknown length,
 * and a queued conversation or a result is a buffer of known length.
 */
import { brotliCompressSync, brotliDecompressSync, constants } from "node:zlib";

/**
 * Results are kept for a day by default and, at high rates, are what sizes
 * Redis: they are compressed at quality 5, where brotli stops paying off
 * here (9 saves another 2% at six times the CPU).
 */
const RESULT_QUALITY = 5;

/**
 * A queued conversation lives only until its job settles, and every request
 * pays for its compression on the API: it is compressed at quality 4 (about
 * two thirds of quality 5's CPU, 1-2 points of the text larger), and again at
 * quality 5 only when quality 4 leaves more than {@link QUICK_SHARE} of it.
 * Quality 5 alone keeps every corpus conversation's job within 30% of its
 * JSON in Redis, the goal the queue is sized by; quality 4 alone would put
 * the largest at 31-32% (docs/BENCHMARKS.md, the Service reading). A
 * quarter keeps what quality 4 is accepted for within that goal with the
 * job's hash and the allocator's rounding on top (a 100 KB conversation:
 * at most 25 KB, in jemalloc's 28 KB class, plus 1.2 KB).
 */
const QUICK_QUALITY = 4;
const QUICK_SHARE = 0.25;

/** Compresses a JSON value to the raw bytes stored in a payload key. */
export function encodePayload(value: unknown): Buffer {
  return encodePayloadBytes(Buffer.from(JSON.stringify(value), "utf8"));
}

/**
 * {@link encodePayload} of JSON that is at hand as its UTF-8 bytes already (a
 * request body as received): compressed as they are, without writing the
 * value out again (for a 100 KB conversation that writing was 1.2-1.4 ms of
 * the 3.4-3.8 ms encodePayload took).
 */
export function encodePayloadBytes(json: Uint8Array): Buffer {
  const quick = compress(json, QUICK_QUALITY);
  return quick.length <= json.length * QUICK_SHARE ? quick : compress(json, RESULT_QUALITY);
}

/** A result's JSON text compressed, as base64 for a store that holds text. */
export function encodeJson(text: string): string {
  return encodeJsonText(text).toString("base64");
}

/** {@link encodeJson} as raw bytes, for a store that holds bytes. */
export function encodeJsonText(text: string): Buffer {
  return compress(Buffer.from(text, "utf8"), RESULT_QUALITY);
}

function compress(json: Uint8Array, quality: number): Buffer {
  return brotliCompressSync(json, {
    params: {
      [constants.BROTLI_PARAM_QUALITY]: quality,
      [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
      [constants.BROTLI_PARAM_SIZE_HINT]: json.length,
      [constants.BROTLI_PARAM_LGWIN]: windowBitsFor(json.length),
    },
  });
}

/**
 * The smallest window that holds all of a text of `length` bytes (brotli
 * needs 16 bytes of it for itself). The default, 22 bits, makes every
 * compression allocate and fault in a 4 MB ring buffer that a 100 KB text
 * leaves unused: measured on 100 KB corpus texts, a compression took
 * 15-30% more CPU with it (most of the difference system time) for the same
 * bytes out. And zlib reports that memory to V8 as external, so an API
 * compressing 32 requests at once pushed V8 past its external-memory limit
 * every twenty requests or so, each time a full mark-compact of 10-25 ms on
 * the event loop (`--trace-gc` over 1,800 requests with 32 in flight:
 * 98-104; with the fitted window, 21-27).
 */
export function windowBitsFor(length: number): number {
  const fitting = Math.ceil(Math.log2(length + 16));
  return Math.min(constants.BROTLI_MAX_WINDOW_BITS, Math.max(constants.BROTLI_MIN_WINDOW_BITS, fitting));
}

/** What the encoders produce: raw bytes, or a string holding them as base64. */
export type Packed = Uint8Array | string;

/** The inverse of {@link encodePayload} and {@link encodeJson}; throws on anything they did not produce. */
export function decodePayload(packed: Packed): unknown {
  return JSON.parse(inflatePayload(packed).toString("utf8"));
}

/**
 * The first half of {@link decodePayload}: the JSON text, not yet parsed.
 * Parsing and planning take far longer than decompressing, so a caller that
 * must prepare for them (see lockForCpuWork.ts) learns the size here first.
 */
export function inflatePayload(packed: Packed): Buffer {
  const bytes = typeof packed === "string" ? Buffer.from(packed, "base64") : packed;
  return brotliDecompressSync(bytes, { chunkSize: outputChunkFor(bytes.length) });
}

/**
 * Brotli shrinks the service's JSON four- to sevenfold; eight times the
 * compressed size holds nearly every text in one output buffer. With the
 * default of 16 KiB a 100 KB conversation came back in seven buffers, each a
 * round trip between libuv's pool and the event loop (when decompression was
 * asynchronous) and a copy at the end: 0.3-0.5 ms of CPU against 0.2-0.3 ms
 * in one. The cap bounds the buffer a
 * multi-megabyte conversation is read in.
 */
function outputChunkFor(compressedLength: number): number {
  return Math.min(MAX_OUTPUT_CHUNK, Math.max(constants.Z_DEFAULT_CHUNK, compressedLength * 8));
}

const MAX_OUTPUT_CHUNK = 1024 * 1024;
