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
import { createHash } from "node:crypto";

export interface Replaces {
  /** How many leading messages of the request the result's `messages` replace. */
  readonly count: number;
  /** SHA-256 (lowercase hex) of the canonical JSON of those messages as one array. */
  readonly digest: string;
}

/**
 * The swap contract for a result that replaces all of `messages`. A caller
 * that has their canonical JSON already (the API digests a request's messages
 * for its idempotency key too) hands it over rather than have it written twice.
 */
export function replacesOf(messages: readonly unknown[], canonicalMessages = canonicalJson(messages)): Replaces {
  return {
    count: messages.length,
    digest: createHash("sha256").update(canonicalMessages, "utf8").digest("hex"),
  };
}

/**
 * JSON with object keys sorted (by UTF-16 code units, as RFC 8785 orders them)
 * and no whitespace, so that two agents, or an agent and this service, hash the
 * same messages to the same digest whatever order their JSON library wrote the
 * keys in. Strings and numbers are written as `JSON.stringify` writes them, which
 * is the serialization RFC 8785 adopts; values JSON cannot carry are dropped or
 * nulled the same way `JSON.stringify` does, so the digest covers exactly what
 * went over the wire. It walks with an explicit stack rather than recursion: an
 * agent digests its own messages (the client's `applyCompaction`), and those
 * may nest deeper than any request the service accepts.
 *
 * `written` holds the canonical JSON of members already written elsewhere,
 * by identity: they are copied in rather than walked again.
 */
export function canonicalJson(value: unknown, written?: ReadonlyMap<object, string>): string {
  const out: string[] = [];
  // Values still to write, the next one last; a string is punctuation to emit as it is.
  const work: ({ value: unknown } | string)[] = [{ value }];
  for (let next = work.pop(); next !== undefined; next = work.pop()) {
    if (typeof next === "string") {
      out.push(next);
      continue;
    }
    const current = next.value;
    if (current === null || typeof current !== "object") {
      out.push(JSON.stringify(current) ?? "null");
      continue;
    }
    const known = written?.get(current);
    if (known !== undefined) {
      out.push(known);
      continue;
    }
    // Pushed in reverse, so the members come off the stack in order.
    if (Array.isArray(current)) {
      work.push("]");
      for (let i = current.length - 1; i >= 0; i--) {
        work.push({ value: current[i] });
        if (i > 0) work.push(",");
      }
      out.push("[");
      continue;
    }
    const record = current as Record<string, unknown>;
    const keys = Object.keys(record)
      .filter((key) => !isDropped(record[key]))
      .sort();
    work.push("}");
    for (let i = keys.length - 1; i >= 0; i--) {
      work.push({ value: record[keys[i]!] });
      work.push(`${i > 0 ? "," : ""}${JSON.stringify(keys[i])}:`);
    }
    out.push("{");
  }
  return out.join("");
}

/** Members `JSON.stringify` leaves out of an object (and writes as null in an array). */
function isDropped(value: unknown): boolean {
  return value === undefined || typeof value === "function" || typeof value === "symbol";
}
