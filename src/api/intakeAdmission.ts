/**
 * How many request bodies the API takes in at once.
 *
 * Every compaction request is read, parsed and checked in memory, and a
 * conversation of 20 MiB costs several times that while it is parsed; fifty
 * at once would take the API past its memory limit. So a POST is admitted
 * before its body is read, against two limits: the number of intakes in
 * flight and the bytes they announce (`Content-Length`; a chunked body counts
 * as the body limit, the most it may grow to, and so does a compressed one,
 * whose Content-Length is not what it decompresses to: requestEncoding.ts).
 * Beyond either, the request is
 * answered 503 with `Retry-After` at once, its body unread: the agent's client
 * retries, and a replica with room (or this one, a moment later) takes it.
 * An admission is released when its response is finished or the client goes away.
 */
import type { FastifyReply, FastifyRequest } from "fastify";
import { ApiError, RETRY_AFTER_SECONDS } from "./apiError.js";
import { declaredCoding } from "./requestEncoding.js";
import { ErrorCodes } from "../client/errorCodes.js";

export interface IntakeLimits {
  /** Intakes in flight at most (`COMPACTD_MAX_INTAKES`). */
  readonly maxIntakes: number;
  /** Announced body bytes in flight at most (`COMPACTD_MAX_INTAKE_BYTES`). */
  readonly maxBytes: number;
  /** What a body without `Content-Length` may grow to (`COMPACTD_BODY_LIMIT_BYTES`). */
  readonly bodyLimitBytes: number;
}

export interface IntakeAdmission {
  /** A fastify onRequest hook: admits the request or throws the 503. */
  admit(request: FastifyRequest, reply: FastifyReply): Promise<void>;
  /** Intakes and bytes in flight now. */
  inFlight(): { readonly intakes: number; readonly bytes: number };
}

export function createIntakeAdmission(limits: IntakeLimits): IntakeAdmission {
  let intakes = 0;
  let bytes = 0;
  return {
    inFlight: () => ({ intakes, bytes }),
    async admit(request, reply) {
      // What a compressed body decompresses to is known only once it is read.
      const announced = declaredCoding(request.headers) === undefined ? Number(request.headers["content-length"]) : Number.NaN;
      // Larger than the body limit: fastify refuses it with 413 without reading it; nothing to reserve.
      const size = Number.isSafeInteger(announced) && announced >= 0 ? Math.min(announced, limits.bodyLimitBytes) : limits.bodyLimitBytes;
      if (intakes >= limits.maxIntakes) throw busy(`${intakes} requests are being taken in (limit ${limits.maxIntakes})`);
      // One intake is always admitted, however large, so a body under the body limit can always get through.
      if (intakes > 0 && bytes + size > limits.maxBytes) {
        throw busy(`${bytes} bytes of requests are being taken in (limit ${limits.maxBytes})`);
      }
      intakes += 1;
      bytes += size;
      let released = false;
      reply.raw.once("close", () => {
        if (released) return;
        released = true;
        intakes -= 1;
        bytes -= size;
      });
    },
  };
}

function busy(detail: string): ApiError {
  return new ApiError(503, ErrorCodes.busy, `the API is at its intake limit: ${detail}; retry shortly`, undefined, undefined, {
    "retry-after": String(RETRY_AFTER_SECONDS),
  });
}
