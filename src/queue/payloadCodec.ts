/**
 * Compression of the conversations and results the service keeps in Redis
 * (each once: a callback reads the stored result rather than keeping a copy).
 *
 * A queued job carries the whole conversation (100 KB is ordinary, megabytes
 * happen) and Redis holds it in memory until a worker is free, so backlog
 * capacity is set by payload size. Brotli at a middling quality shrinks agent
 * transcripts (prose, code, JSON tool output) to about a quarter in a couple of
 * milliseconds per 100 KB; base64 then costs a third back, because BullMQ
 * stores job data as JSON text. The result: ~35% of the raw JSON per job.
 */
import { promisify } from "node:util";
import { brotliCompress, brotliDecompress, constants } from "node:zlib";

const compress = promisify(brotliCompress);
const decompress = promisify(brotliDecompress);

/**
 * Quality 5 is where brotli stops paying off here: 9 saves another 2% at six
 * times the CPU, which the API would spend on every request.
 */
const QUALITY = 5;

/** Compresses a JSON value to a base64 string that fits in BullMQ job data. */
export function encodePayload(value: unknown): Promise<string> {
  return encodeJson(JSON.stringify(value));
}

/** {@link encodePayload} for a value already written as JSON text. */
export async function encodeJson(text: string): Promise<string> {
  const json = Buffer.from(text, "utf8");
  const packed = await compress(json, {
    params: {
      [constants.BROTLI_PARAM_QUALITY]: QUALITY,
      [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
      [constants.BROTLI_PARAM_SIZE_HINT]: json.length,
    },
  });
  return packed.toString("base64");
}

/** The inverse of {@link encodePayload}; throws on anything it did not produce. */
export async function decodePayload(encoded: string): Promise<unknown> {
  return JSON.parse((await inflatePayload(encoded)).toString("utf8"));
}

/**
 * The first half of {@link decodePayload}: the JSON text, not yet parsed.
 * Decompression runs on libuv's thread pool; parsing blocks the event loop,
 * so a caller that must prepare for that (see lockForCpuWork.ts) learns the
 * size here first.
 */
export async function inflatePayload(encoded: string): Promise<Buffer> {
  return decompress(Buffer.from(encoded, "base64"));
}
