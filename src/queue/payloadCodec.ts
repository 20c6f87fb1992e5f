/**
 * Compression of the conversations and results the service keeps in Redis
 * (each once: a callback reads the stored result rather than keeping a copy).
 *
 * A queued job carries the whole conversation (100 KB is ordinary, megabytes
 * happen) and Redis holds it in memory until a worker is free, so backlog
 * capacity is set by payload size. Zstandard shrinks agent transcripts
 * (prose, code, JSON tool output) to about a quarter: at level 3 in a
 * quarter of a millisecond per 100 KB, a quarter of what brotli, which
 * earlier versions wrote, took at quality 4 for about the same bytes, and
 * gives them back in a third of brotli's time (docs/BENCHMARKS.md,
 * Service). A queued conversation is stored as those raw
 * bytes, in a key of its own beside its job (payloadStore.ts): in BullMQ's
 * job data, which is JSON text, it would need base64, a third more. What
 * must live in text (results stored as base64, the inline payloads of jobs
 * queued by earlier versions) is the same bytes as base64, and
 * {@link inflatePayload} reads either form.
 *
 * Reading also takes brotli, which every earlier version wrote: a zstd frame
 * opens with its magic number, and no brotli stream those versions wrote can
 * open with its first byte (see {@link isZstdFrame}), so what is stored says
 * which it is. A process of an earlier version cannot read zstd, which is
 * why DEPLOY.md has the workers upgraded first.
 *
 * Everything here is synchronous, on the caller's thread, for two reasons.
 * - It costs less: zlib's asynchronous API cost a 100 KB conversation 0.2 ms
 *   more than its synchronous one, the round trips between libuv's thread
 *   pool and the event loop; under load the API and the worker each spent
 *   about a millisecond less per job once compression was synchronous
 *   (docs/BENCHMARKS.md, Service).
 * - A job does not depend on libuv's pool, which a process shares with the
 *   file system and `dns.lookup`. libuv lets lookups take at most half of
 *   it, so a resolver that does not answer only slowed the compressions
 *   down; a file system call that hangs could stop them all
 *   (test/worker/threadPoolHeld.test.ts holds the whole pool through a job).
 * The cost is the event loop's, in the same stretch as parsing the same JSON
 * (the API's intake, lockForCpuWork.ts in the worker), which takes longer.
 */
import { brotliDecompressSync, constants } from "node:zlib";
import { compress, decompress } from "zstd-napi";

/**
 * A queued conversation lives only until its job settles, and every request
 * pays for its compression on the API: it is compressed at level 3, and
 * again at {@link FALLBACK_LEVEL} only when level 3 leaves more than
 * {@link QUICK_SHARE} of it (and it is {@link FALLBACK_MIN_BYTES} or more).
 * On the bench's sixteen corpus conversations,
 * level 3 alone leaves four of them over a quarter and the largest at 28.7%
 * of its JSON, which with the job's hash and the allocator's rounding
 * (a 100 KB conversation: at most 25 KB, in jemalloc's 28 KB class, plus
 * 1.2 KB) would break the goal the queue is sized by, 30% in Redis; the
 * rule keeps every one within it at 0.6 ms per 100 KB on average, against
 * 1.1 ms for brotli at quality 4 and then 5 (docs/BENCHMARKS.md, Service).
 */
const QUICK_LEVEL = 3;
const FALLBACK_LEVEL = 9;
const QUICK_SHARE = 0.25;

/**
 * Shorter conversations are not compressed again, whatever level 3 leaves:
 * short texts hold too few repeats for level 9 to find more. Stretches of
 * the corpus's sessions of about 4, 8 and 16 KB were left above a quarter by
 * level 3 in 16, 16 and 9 cases of 16, and level 9 brought none of them
 * under it, saving 43, 109 and 293 bytes on average (less than the job's
 * own hash, 1.2 KB) for a second compression, at its slowest level; from
 * 32 KB it brought half of them under.
 */
const FALLBACK_MIN_BYTES = 16 * 1024;

/**
 * Results are kept for a day by default and, at high rates, are what sizes
 * Redis: they are compressed at level 6, within 3% of the bytes brotli's
 * quality 5 gave (21.1% of the corpus conversations' JSON against 20.5%) at
 * half its CPU; level 9 saves another 1.4% at 1.4 times level 6's CPU.
 */
const RESULT_LEVEL = 6;

/**
 * Compresses a conversation's JSON, given as its bytes, to the raw bytes
 * stored in a payload key. A single request's body is stored as the API
 * took it in, never written out again (for a 100 KB conversation that
 * writing was 1.2-1.4 ms of the 3.4-3.8 ms encoding the parsed value took).
 */
export function encodePayload(json: Uint8Array): Buffer {
  const quick = compressAt(json, QUICK_LEVEL);
  return quick.length <= json.length * QUICK_SHARE || json.length < FALLBACK_MIN_BYTES ? quick : compressAt(json, FALLBACK_LEVEL);
}

/** A result's JSON text compressed, as base64 for a store that holds text. */
export function encodeJson(text: string): string {
  return encodeJsonText(text).toString("base64");
}

/** {@link encodeJson} as raw bytes, for a store that holds bytes. */
export function encodeJsonText(text: string): Buffer {
  return compressAt(Buffer.from(text, "utf8"), RESULT_LEVEL);
}

/**
 * One zstd frame holding `json`, with its size (zstd fits its window and
 * tables to it, and a decompression allocates its output once) and a
 * checksum of its content (4 bytes, so damage to a stored value is an error
 * rather than a different conversation).
 */
function compressAt(json: Uint8Array, level: number): Buffer {
  return compress(json, { compressionLevel: level, checksumFlag: true });
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
  return isZstdFrame(bytes) ? decompress(bytes) : brotliDecompressSync(bytes, { chunkSize: outputChunkFor(bytes.length) });
}

/** The first four bytes of every zstd frame: its magic number, 0xFD2FB528, little-endian. */
const ZSTD_MAGIC = [0x28, 0xb5, 0x2f, 0xfd] as const;

/**
 * Whether `bytes` open with zstd's magic number. A brotli stream cannot
 * (RFC 7932, section 9.2): a first byte of 0x28 would declare a 64 KB window
 * and a first meta-block of more than 1 MiB, and earlier versions wrote a
 * 64 KB window only for texts shorter than 64 KB (a fitted window), or
 * brotli's default 4 MB window, whose first byte is odd.
 */
function isZstdFrame(bytes: Uint8Array): boolean {
  return ZSTD_MAGIC.every((byte, i) => bytes[i] === byte);
}

/**
 * The output buffer a brotli stream of an earlier version is read into (a
 * zstd frame declares its size). Brotli shrinks the service's JSON four- to
 * sevenfold; eight times the compressed size holds nearly every text in one
 * buffer, where zlib's default of 16 KiB gave a 100 KB conversation back in
 * seven and a copy at the end. The cap bounds the buffer a multi-megabyte
 * conversation is read in.
 */
function outputChunkFor(compressedLength: number): number {
  return Math.min(MAX_OUTPUT_CHUNK, Math.max(constants.Z_DEFAULT_CHUNK, compressedLength * 8));
}

const MAX_OUTPUT_CHUNK = 1024 * 1024;
