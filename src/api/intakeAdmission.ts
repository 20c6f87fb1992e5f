/**
 * How many request bodies the API takes in at once.
 *
 * Every compaction request is read, parsed and checked in memory, and a
 * conversation of 20 MiB costs several times that while it is parsed; fifty
 * at once would take the API past its memory limit. So a POST is admitted
 * before its body is read, against two limits: the number of intakes in
 * flight and the bytes they announce (`Content-Length`; a chunked body counts
 * as the body limit, the most it may grow to). Beyond either, the request is
 * answered 503 with `Retry-After` at once, its body unread: the agent's client
 * retries, and a replica with room (or this one, a moment later) takes it.
 * An admission is released when its response is finished or the client goes away.
 *
 * A compressed body announces its compressed size, a quarter or less of what
 * it becomes. It is admitted on that, and its admission grows by each piece
 * it decompresses to (requestEncoding.ts): past the limit, while other
 * intakes are in flight, it is answered the same 503. Counting it as the body
 * limit from the start would have let six compressed bodies in at once under
 * the default limits, whatever their size.
 */
import type { FastifyReply, FastifyRequest } from "fastify";
import { ApiError, RETRY_AFTER_SECONDS } from "./apiError.js";
import { ErrorCodes } from "../client/errorCodes.js";

export interface IntakeLimits {
  /** Intakes in flight at most (`COMPACTD_MAX_INTAKES`). */
  readonly maxIntakes: number;
  /** Body bytes in flight at most (`COMPACTD_MAX_INTAKE_BYTES`). */
  readonly maxBytes: number;
  /** What a body without `Content-Length` may grow to (`COMPACTD_BODY_LIMIT_BYTES`). */
  readonly bodyLimitBytes: number;
}

export interface IntakeAdmission {
  /** A fastify onRequest hook: admits the request or throws the 503. */
  admit(request: FastifyRequest, reply: FastifyReply): Promise<void>;
  /**
   * Counts `bytes` more against `request`'s admission: what its compressed
   * body decompresses to. Throws the 503 when they would take the bytes in
   * flight past the limit while other intakes are in flight.
   */
  grow(request: FastifyRequest, bytes: number): void;
  /** Intakes and bytes in flight now. */
  inFlight(): { readonly intakes: number; readonly bytes: number };
}

/** What one admitted intake holds of the limits. */
interface Admitted {
  bytes: number;
  /** Counted as the body limit already (no Content-Length): it cannot grow past that. */
  readonly atLimit: boolean;
}

export function createIntakeAdmission(limits: IntakeLimits): IntakeAdmission {
  let intakes = 0;
  let bytes = 0;
  const admitted = new WeakMap<FastifyRequest, Admitted>();
  return {
    inFlight: () => ({ intakes, bytes }),
    async admit(request, reply) {
      const announced = Number(request.headers["content-length"]);
      const known = Number.isSafeInteger(announced) && announced >= 0;
      // Larger than the body limit: fastify refuses it with 413 without reading it; nothing to reserve.
      const size = known ? Math.min(announced, limits.bodyLimitBytes) : limits.bodyLimitBytes;
      if (intakes >= limits.maxIntakes) throw busy(`${intakes} requests are being taken in (limit ${limits.maxIntakes})`);
      // One intake is always admitted, however large, so a body under the body limit can always get through.
      if (intakes > 0 && bytes + size > limits.maxBytes) {
        throw busy(`${bytes} bytes of requests are being taken in (limit ${limits.maxBytes})`);
      }
      intakes += 1;
      bytes += size;
      const held: Admitted = { bytes: size, atLimit: !known };
      admitted.set(request, held);
      let released = false;
      reply.raw.once("close", () => {
        if (released) return;
        released = true;
        intakes -= 1;
        bytes -= held.bytes;
      });
    },
    grow(request, more) {
      const held = admitted.get(request);
      if (held === undefined || held.atLimit) return;
      if (intakes > 1 && bytes + more > limits.maxBytes) {
        throw busy(`${bytes} bytes of requests are being taken in (limit ${limits.maxBytes}), this one decompressing past what it announced`);
      }
      held.bytes += more;
      bytes += more;
    },
  };
}

function busy(detail: string): ApiError {
  return new ApiError(503, ErrorCodes.busy, `the API is at its intake limit: ${detail}; retry shortly`, undefined, undefined, {
    "retry-after": String(RETRY_AFTER_SECONDS),
  });
}
