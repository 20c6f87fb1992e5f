/**
 * The exact-swap contract of an asynchronous compaction.
 *
 * An agent that hands its conversation to the service keeps working while the
 * compaction runs, so by the time the result arrives its message list has grown.
 * The result therefore says which leading messages it stands for: their count
 * and a digest of their canonical JSON. The agent checks that its first `count`
 * messages still hash to `digest`, swaps them for the result's messages and keeps
 * everything appended since. If an earlier message was edited or dropped in the
 * meantime the digest no longer matches and the stale result is rejected instead
 * of silently rewriting history.
 */
import { createHash, type Hash } from "node:crypto";
import { fieldPath } from "./fieldPath.js";
import { cycleProblem, MAX_NESTING_DEPTH } from "./formats/nestingDepth.js";

export interface Replaces {
  /** How many leading messages of the request the result's `messages` replace. */
  readonly count: number;
  /** SHA-256 (lowercase hex) of the canonical JSON of those messages as one array. */
  readonly digest: string;
}

/**
 * The swap contract for a result that replaces all of `messages`. A caller
 * that has digested their canonical JSON already (the API hashes a request's
 * messages for its idempotency key in the same pass) hands the digest over
 * rather than have them written twice.
 */
export function replacesOf(messages: readonly unknown[], known?: { readonly digest: string }): Replaces {
  return { count: messages.length, digest: known?.digest ?? canonicalDigest(messages, { path: "messages" }) };
}

/**
 * SHA-256 (lowercase hex) of the UTF-8 bytes of `value`'s canonical JSON,
 * hashed as it is written. The same bytes also go into `alsoInto` when it is
 * given: the API's request digest takes a message list's text as it goes by.
 * `path` names `value` in a refusal (see writeCanonicalJson).
 */
export function canonicalDigest(value: unknown, { alsoInto, path }: { readonly alsoInto?: Hash | undefined; readonly path?: string | undefined } = {}): string {
  const hash = createHash("sha256");
  // Into two hashes, each piece is encoded once; into one, the hash encodes it (0.05 ms less for 100 KB).
  const write =
    alsoInto === undefined
      ? (piece: string) => hash.update(piece, "utf8")
      : (piece: string) => {
          const bytes = Buffer.from(piece, "utf8");
          hash.update(bytes);
          alsoInto.update(bytes);
        };
  writeCanonicalJson(value, write, { path });
  return hash.digest("hex");
}

/**
 * How much canonical JSON is gathered before it is handed on, in UTF-16 code
 * units. Under V8's large-object size (128 KiB) even when every unit takes
 * two bytes: a conversation's whole text as one string is such an object,
 * mapped fresh from the kernel and page-faulted in on every request, where
 * pieces this size come and go in the young generation. Measured on the
 * API's digests of a 100 KB conversation (docs/BENCHMARKS.md, Service).
 */
const PIECE_UNITS = 32 * 1024;

/**
 * JSON with object keys sorted (by UTF-16 code units, as RFC 8785 orders them)
 * and no whitespace, so that two agents, or an agent and this service, hash the
 * same messages to the same digest whatever order their JSON library wrote the
 * keys in. Strings and numbers are written as `JSON.stringify` writes them, which
 * is the serialization RFC 8785 adopts; a value with a `toJSON` is written as
 * what it gives (a Date as its ISO text, which is all the service receives of
 * an agent framework's timestamps), and values JSON cannot carry are dropped or
 * nulled the same way `JSON.stringify` does, so the digest covers exactly what
 * went over the wire. It walks with an explicit stack rather than recursion: an
 * agent digests its own messages (the client's `applyCompaction`), and those
 * may nest deeper than any request the service accepts.
 *
 * What JSON cannot carry at all is refused with a TypeError naming the
 * field: a value inside itself (a cycle), which would otherwise be written
 * until memory ran out, and a BigInt, which `JSON.stringify` refuses without
 * saying where.
 *
 * `written` holds the canonical JSON of members already written elsewhere,
 * by identity: they are copied in rather than walked again.
 */
export function canonicalJson(value: unknown, written?: ReadonlyMap<object, string>): string {
  let text = "";
  writeCanonicalJson(value, (piece) => (text += piece), { written });
  return text;
}

interface CanonicalJsonOptions {
  /** Members whose canonical JSON is already written, by identity (see canonicalJson). */
  readonly written?: ReadonlyMap<object, string> | undefined;
  /** What a refusal calls `value` (`messages`); its fields are named below it. By default `value`'s own members start the path. */
  readonly path?: string | undefined;
}

/**
 * Writes `value`'s canonical JSON (see canonicalJson) to `write` in pieces,
 * in order, so that a digest is taken without the whole text ever being one
 * string.
 */
export function writeCanonicalJson(value: unknown, write: (piece: string) => void, { written, path = "" }: CanonicalJsonOptions = {}): void {
  let out = "";
  // The containers being written, innermost last, each with the member it is at.
  const open: OpenContainer[] = [];
  // The containers open below CYCLE_CHECK_DEPTH: a cycle shows as one of them opened again inside itself.
  const deepOpen = new Set<object>();
  const enter = (container: OpenContainer): void => {
    if (open.length >= CYCLE_CHECK_DEPTH) {
      if (deepOpen.has(container.container)) throw cycleError(open, container.container, path);
      deepOpen.add(container.container);
    }
    open.push(container);
  };
  // Member names repeat across a conversation ("type", "text", "content"): quote each once.
  const quoted = new Map<string, string>();
  const quote = (key: string): string => {
    let text = quoted.get(key);
    if (text === undefined) {
      text = JSON.stringify(key);
      quoted.set(key, text);
    }
    return text;
  };
  let current = jsonValueOf(value, "");
  for (;;) {
    if (out.length >= PIECE_UNITS) {
      write(out);
      out = "";
    }
    // Write `current`, or open it and go on with its first member.
    const known = current !== null && typeof current === "object" ? written?.get(current) : undefined;
    if (current === null || typeof current !== "object") {
      // The one primitive JSON.stringify throws on, named here where the path is known.
      if (typeof current === "bigint") throw new TypeError(`${pathOf(open, open.length, path)}: is a BigInt, which JSON cannot carry; send it as a number or a string`);
      out += JSON.stringify(current) ?? "null";
    } else if (known !== undefined) {
      out += known;
    } else if (Array.isArray(current)) {
      if (current.length > 0) {
        out += "[";
        enter({ container: current, keys: undefined, at: 0 });
        current = jsonValueOf(current[0], "0");
        continue;
      }
      out += "[]";
    } else {
      const record = current as Record<string, unknown>;
      const keys = writtenKeys(record);
      if (keys.length > 0) {
        out += `{${quote(keys[0]!)}:`;
        enter({ container: record, keys, at: 0 });
        current = jsonValueOf(record[keys[0]!], keys[0]!);
        continue;
      }
      out += "{}";
    }
    // Move to the next member, closing every container that has none left.
    for (;;) {
      const innermost = open[open.length - 1];
      if (innermost === undefined) {
        write(out);
        return;
      }
      const at = ++innermost.at;
      if (innermost.keys === undefined) {
        const list = innermost.container as readonly unknown[];
        if (at < list.length) {
          out += ",";
          current = jsonValueOf(list[at], String(at));
          break;
        }
        out += "]";
      } else {
        if (at < innermost.keys.length) {
          const key = innermost.keys[at]!;
          out += `,${quote(key)}:`;
          current = jsonValueOf((innermost.container as Record<string, unknown>)[key], key);
          break;
        }
        out += "}";
      }
      if (open.length > CYCLE_CHECK_DEPTH) deepOpen.delete(innermost.container);
      open.pop();
    }
  }
}

/**
 * How deep the writer nests before it watches for a cycle. Nothing the
 * service accepts nests deeper, so its digests of every request never pay
 * for the watch; an agent's own messages that nest deeper pay a set's
 * lookup per container, and a cycle, which nests without end, always
 * reaches it.
 */
const CYCLE_CHECK_DEPTH = MAX_NESTING_DEPTH;

/**
 * The refusal of `container`, about to be opened inside itself: named at the
 * first place it recurs, as the value it recurs in.
 */
function cycleError(open: readonly OpenContainer[], container: object, root: string): TypeError {
  const first = open.findIndex((entry) => entry.container === container);
  const again = open.findIndex((entry, i) => i > first && entry.container === container);
  const recurs = again === -1 ? open.length : again;
  return new TypeError(`${pathOf(open, recurs, root)}: ${cycleProblem(pathOf(open, first, root))}`);
}

/** The path of the member that `open[depth - 1]` is at (of the value itself when `depth` is 0). */
function pathOf(open: readonly OpenContainer[], depth: number, root: string): string {
  let path = root;
  for (let i = 0; i < depth; i++) {
    const { keys, at } = open[i]!;
    path = keys === undefined ? `${path}[${at}]` : fieldPath(path, keys[at]!);
  }
  return path;
}

interface OpenContainer {
  readonly container: readonly unknown[] | Record<string, unknown>;
  /** An object's member names in writing order; undefined for an array. */
  readonly keys: readonly string[] | undefined;
  /** The member being written. */
  at: number;
}

/** An object's member names as JSON.stringify would write them, sorted; parsed JSON has none to drop. */
function writtenKeys(record: Record<string, unknown>): string[] {
  let keys = Object.keys(record);
  const dropped = (key: string): boolean => isDropped(jsonValueOf(record[key], key));
  if (keys.some(dropped)) keys = keys.filter((key) => !dropped(key));
  return keys.sort();
}

/**
 * `value` as `JSON.stringify` takes it: what its `toJSON` gives, if it has
 * one, called with the member's name or index as `JSON.stringify` calls it.
 * Parsed JSON has none.
 */
function jsonValueOf(value: unknown, key: string): unknown {
  if ((value === null || typeof value !== "object") && typeof value !== "bigint") return value;
  const toJSON = (value as { toJSON?: unknown }).toJSON;
  return typeof toJSON === "function" ? (toJSON as (key: string) => unknown).call(value, key) : value;
}

/** Members `JSON.stringify` leaves out of an object (and writes as null in an array). */
function isDropped(value: unknown): boolean {
  return value === undefined || typeof value === "function" || typeof value === "symbol";
}
