import { brotliCompressSync, constants } from "node:zlib";

/**
 * A conversation as versions before zstd compressed it: brotli in text mode,
 * at quality 4 or 5, with the smallest window holding the text (the versions
 * just before) or brotli's default 4 MB one (those before them).
 */
export function earlierBrotli(json: Buffer, quality = 5, fittedWindow = true): Buffer {
  const fitted = Math.min(constants.BROTLI_MAX_WINDOW_BITS, Math.max(constants.BROTLI_MIN_WINDOW_BITS, Math.ceil(Math.log2(json.length + 16))));
  return brotliCompressSync(json, {
    params: {
      [constants.BROTLI_PARAM_QUALITY]: quality,
      [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
      [constants.BROTLI_PARAM_SIZE_HINT]: json.length,
      ...(fittedWindow && { [constants.BROTLI_PARAM_LGWIN]: fitted }),
    },
  });
}
