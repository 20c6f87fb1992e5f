/**
 * Request bodies sent compressed. A conversation is mostly text and shrinks
 * to a quarter or less, so an agent far from the service, or an HTTP client
 * or proxy on its way, may send it with `Content-Encoding: gzip` (or
 * deflate, or br). The body is decompressed as it arrives, before the JSON
 * parser reads it, and what comes out is what counts: fastify's body limit
 * refuses a few kilobytes that would expand to gigabytes like any body over
 * it (413), having read no more than the limit, and intake admission counts
 * each piece against the bytes in flight (intakeAdmission.ts).
 *
 * Until this, the header was ignored: a gzip body went to the JSON parser as
 * it came and was refused as "not valid JSON", about bytes never meant to be
 * read as JSON. Now an encoding not listed here is refused with 415 naming
 * the header (and `Accept-Encoding` saying what is taken, as RFC 9110
 * asks), and bytes that are not what the header says with 400.
 */
import { Transform, type Readable } from "node:stream";
import { createBrotliDecompress, createGunzip, createInflate } from "node:zlib";
import type { IncomingHttpHeaders } from "node:http";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { ErrorCodes } from "../client/errorCodes.js";
import { ApiError, echoed } from "./apiError.js";
import { carriesBody } from "./jsonBodies.js";

/** A Map, not an object literal: a header naming `constructor` or `__proto__` must find no decoder. */
const DECODERS: ReadonlyMap<string, () => Transform> = new Map([
  ["gzip", createGunzip],
  ["deflate", createInflate],
  ["br", createBrotliDecompress],
]);

/** The codings taken besides `identity`. */
export const ACCEPTED_CODINGS: readonly string[] = [...DECODERS.keys()];

/** The same, as an `Accept-Encoding` value. */
const ACCEPT_ENCODING = ACCEPTED_CODINGS.join(", ");

/** The coding a request's body declares, lower-cased; undefined for none (no header, or `identity`). */
function declaredCoding(headers: IncomingHttpHeaders): string | undefined {
  const coding = headers["content-encoding"]?.trim().toLowerCase();
  return coding === undefined || coding === "" || coding === "identity" ? undefined : coding;
}

/**
 * What is told of each piece a body decompresses to, before it goes on:
 * intake admission counts it (intakeAdmission.ts), and throws to refuse it.
 */
export type OnDecoded = (request: FastifyRequest, bytes: number) => void;

/** Decompresses every request body that declares a Content-Encoding this API takes. */
export function registerRequestDecoding(app: FastifyInstance, onDecoded: OnDecoded): void {
  app.addHook("preParsing", async (request, _reply, payload) => {
    const coding = declaredCoding(request.headers);
    if (coding === undefined) return payload;
    // A body the API does not read (a DELETE's, a GET's) has nothing to decode, whatever it declares.
    if (!carriesBody(request.method)) return payload;
    const decoder = DECODERS.get(coding === "x-gzip" ? "gzip" : coding);
    if (decoder === undefined) {
      throw new ApiError(
        415,
        ErrorCodes.unsupportedMediaType,
        `content-encoding: ${echoed(request.headers["content-encoding"] ?? "")} is not taken; send the body uncompressed or as one of ${ACCEPT_ENCODING}`,
        undefined,
        undefined,
        { "accept-encoding": ACCEPT_ENCODING },
      );
    }
    return decoded(payload, decoder(), coding, (bytes) => onDecoded(request, bytes));
  });
}

/**
 * `payload` through `decoder`, as a stream fastify reads like the request
 * itself. `receivedEncodedLength` is how fastify learns the bytes that came
 * over the wire, to hold them to Content-Length while it holds what comes
 * out to the body limit.
 */
function decoded(payload: Readable, decoder: Transform, coding: string, count: (bytes: number) => void): Readable {
  const out = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      try {
        count(chunk.length);
        done(null, chunk);
      } catch (err) {
        done(err as Error);
      }
    },
  }) as Transform & { receivedEncodedLength: number };
  out.receivedEncodedLength = 0;
  payload.on("data", (chunk: Buffer) => {
    out.receivedEncodedLength += chunk.length;
  });
  payload.on("error", (err) => out.destroy(err));
  // Bytes that are not the declared coding: fastify hears this on `out` and answers 400 with it.
  decoder.on("error", (err) => out.destroy(new ApiError(400, ErrorCodes.invalidContentEncoding, `the body is not what content-encoding: ${coding} says (${err.message})`)));
  // A route that reads no body (fastify then never listens on `out`) must not turn the error into an uncaught one.
  out.on("error", () => {});
  payload.pipe(decoder).pipe(out);
  return out;
}
