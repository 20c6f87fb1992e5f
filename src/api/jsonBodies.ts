/**
 * Request bodies as the routes receive them. A small body is parsed on the
 * event loop by fastify's own JSON parser, as it always was: for it, handing
 * it to a thread would cost more than the parsing. A large one (at least
 * COMPACTD_INTAKE_THREAD_MIN_BYTES) reaches the route as its bytes, unparsed,
 * and is parsed on an intake thread with everything else proportional to it
 * (see intakePool.ts): parsing 20 MiB of JSON alone holds a thread for a
 * tenth of a second or more.
 */
import type { FastifyInstance } from "fastify";
import secureJsonParse from "secure-json-parse";
import { ErrorCodes } from "../client/errorCodes.js";
import { ApiError } from "./apiError.js";

/** A body left for an intake thread to parse: the bytes fastify read, in a buffer of their own. */
export class UnparsedJson {
  constructor(readonly bytes: Buffer) {}
}

/**
 * The bytes each body parsed on the event loop was parsed from, by the parsed
 * value: a single compaction's body is stored as the job's payload as it
 * came, compressed, instead of being written out again (compactionIntake.ts).
 */
const receivedJson = new WeakMap<object, Buffer>();

/** The JSON bytes `body` was parsed from on the event loop, when it is a body this parser produced. */
export function receivedJsonOf(body: unknown): Buffer | undefined {
  return body !== null && typeof body === "object" ? receivedJson.get(body) : undefined;
}

/** Replaces fastify's JSON parser with one that leaves bodies of `threadMinBytes` and more unparsed. */
export function registerJsonBodies(app: FastifyInstance, threadMinBytes: number): void {
  // Refuse `__proto__` and `constructor.prototype` keys rather than strip them: 400, not silence.
  const parseOnLoop = app.getDefaultJsonParser("error", "error");
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser("application/json", { parseAs: "buffer" }, (request, body, done) => {
    const bytes = body as Buffer;
    if (bytes.length > 0 && bytes.length >= threadMinBytes) {
      done(null, new UnparsedJson(bytes));
      return;
    }
    parseOnLoop(request, bytes as unknown as string, (err, parsed) => {
      if (err === null && parsed !== null && typeof parsed === "object") receivedJson.set(parsed, bytes);
      done(err, parsed);
    });
  });
}

/**
 * Parses a body's JSON text exactly as the event loop's parser does (the same
 * refusal of prototype-poisoning keys, the same 400 for anything else).
 */
export function parseJsonBytes(bytes: Uint8Array): unknown {
  try {
    return secureJsonParse.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), undefined, {
      protoAction: "error",
      constructorAction: "error",
    });
  } catch {
    throw new ApiError(400, ErrorCodes.invalidJson, "Body is not valid JSON but content-type is set to 'application/json'");
  }
}
