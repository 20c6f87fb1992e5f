/**
 * Request bodies as the routes receive them. A small body is parsed on the
 * event loop by fastify's own JSON parser, as it always was: for it, handing
 * it to a thread would cost more than the parsing. A large one (at least
 * COMPACTD_INTAKE_THREAD_MIN_BYTES) reaches the route as its bytes, unparsed,
 * and is parsed on an intake thread with everything else proportional to it
 * (see intakePool.ts): parsing 20 MiB of JSON alone holds a thread for a
 * tenth of a second or more. Either way the JSON parsed, and stored as a
 * job's payload, is the body as asciiJson.ts takes it.
 */
import type { FastifyInstance, FastifyRequest } from "fastify";
import secureJsonParse from "secure-json-parse";
import { ErrorCodes } from "../client/errorCodes.js";
import { ApiError, echoed } from "./apiError.js";
import { takenJson } from "./asciiJson.js";

/** A body left for an intake thread to parse: the bytes fastify read, in a buffer of their own. */
export class UnparsedJson {
  constructor(readonly bytes: Buffer) {}
}

/**
 * The JSON each body parsed on the event loop was parsed from, by the parsed
 * value: a single compaction's body is stored as the job's payload as it was
 * taken in, compressed, instead of being written out again
 * (compactionIntake.ts).
 */
const receivedJson = new WeakMap<object, string | Buffer>();

/** The JSON `body` was parsed from on the event loop, when it is a body this parser produced. */
function receivedJsonOf(body: unknown): string | Buffer | undefined {
  return body !== null && typeof body === "object" ? receivedJson.get(body) : undefined;
}

/**
 * A request's body as a route takes it: the parsed value (or the bytes left
 * unparsed) and, when at hand, the JSON it was parsed from, as takenJson gave
 * it (turned into bytes only if it becomes a job's payload).
 */
export interface TakenBody {
  readonly body: unknown;
  readonly json?: string | Buffer;
}

/**
 * Takes the body out of `request`: a route examines it once and keeps only
 * what the examination returns, so the parsed body (several times the size
 * of its JSON) is garbage before the route's Redis round trips instead of
 * living through them on the request, where every young-generation
 * collection meanwhile copies it and the second promotes it. Measured side
 * by side on 100 KB conversations (docs/BENCHMARKS.md, Service): the API's
 * CPU per job -0.50 and -0.60 ms in two runs of 15 rounds.
 */
export function takeBody(request: FastifyRequest): TakenBody {
  const { body } = request;
  request.body = undefined;
  const json = receivedJsonOf(body);
  return json === undefined ? { body } : { body, json };
}

/**
 * Whether the API reads the body of a request made with `method`: only a
 * POST's. A DELETE means "cancel" and nothing sent with it changes that, yet
 * many HTTP clients send one with `Content-Type: application/json` and an
 * empty body, or with the JSON they send on every request; fastify read it
 * and refused it (400 for empty JSON, 415 for a body of another type).
 */
export function carriesBody(method: string): boolean {
  return method === "POST";
}

/**
 * Replaces fastify's JSON parser with one that leaves bodies of
 * `threadMinBytes` and more unparsed, and has fastify read no DELETE's body
 * (see carriesBody): it is left unread, as a GET's is, and Node discards it
 * once the request is answered, so the connection stays usable.
 */
export function registerJsonBodies(app: FastifyInstance, threadMinBytes: number): void {
  app.addHttpMethod("DELETE", { hasBody: false, overrideExisting: true });
  app.addHook("preParsing", async (request, _reply, payload) => {
    if (carriesBody(request.method)) refuseOtherCharsets(request.headers["content-type"]);
    return payload;
  });
  // `__proto__` and `constructor.prototype` keys are not looked for here but
  // refused by the route's first walk of the body, naming the field
  // (parseBody): looked for here, every body's text was scanned for them twice.
  const parseOnLoop = app.getDefaultJsonParser("ignore", "ignore");
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser("application/json", { parseAs: "buffer" }, (request, body, done) => {
    const bytes = body as Buffer;
    if (bytes.length > 0 && bytes.length >= threadMinBytes) {
      done(null, new UnparsedJson(bytes));
      return;
    }
    const json = takenJson(bytes);
    parseOnLoop(request, json as string, (err, parsed) => {
      if (err === null && parsed !== null && typeof parsed === "object") receivedJson.set(parsed, json);
      done(err, parsed);
    });
  });
}

/** The names of UTF-8 a Content-Type's charset may give, lower-cased (`utf8` is the WHATWG label clients send too). */
const UTF8_NAMES: ReadonlySet<string> = new Set(["utf-8", "utf8"]);

/**
 * Throws a 415 when `contentType` declares a charset other than UTF-8, on the
 * headers alone, before the body is read. JSON is exchanged in UTF-8 (RFC
 * 8259, section 8.1), and the parser decodes every body as UTF-8: a Latin-1
 * body that said so was decoded into other text than was sent, with no
 * error; a UTF-16 one was refused as "not valid JSON", which it was.
 */
function refuseOtherCharsets(contentType: string | undefined): void {
  const charset = declaredCharset(contentType);
  if (charset === undefined || UTF8_NAMES.has(charset.toLowerCase())) return;
  throw new ApiError(415, ErrorCodes.unsupportedMediaType, `charset ${echoed(charset)} is not taken; send JSON in UTF-8 (application/json, or application/json; charset=utf-8)`);
}

/** The charset parameter of a Content-Type, unquoted, as sent; undefined when it has none. */
function declaredCharset(contentType: string | undefined): string | undefined {
  for (const parameter of (contentType ?? "").split(";").slice(1)) {
    const equals = parameter.indexOf("=");
    if (equals > 0 && parameter.slice(0, equals).trim().toLowerCase() === "charset") {
      return parameter.slice(equals + 1).trim().replace(/^"(.*)"$/, "$1");
    }
  }
  return undefined;
}

/**
 * Parses a body's JSON, as takenJson gives it, exactly as the event loop's
 * parser does (prototype-poisoning keys left to parseBody, the same 400 for
 * anything that is not JSON).
 */
export function parseJson(json: string | Buffer): unknown {
  try {
    return secureJsonParse.parse(json, undefined, {
      protoAction: "ignore",
      constructorAction: "ignore",
    });
  } catch {
    throw new ApiError(400, ErrorCodes.invalidJson, "Body is not valid JSON but content-type is set to 'application/json'");
  }
}
