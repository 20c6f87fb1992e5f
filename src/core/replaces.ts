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

/** The swap contract for a result that replaces all of `messages`. */
export function replacesOf(messages: readonly unknown[]): Replaces {
  return {
    count: messages.length,
    digest: createHash("sha256").update(canonicalJson(messages), "utf8").digest("hex"),
  };
}

/**
 * JSON with object keys sorted (by UTF-16 code units, as RFC 8785 orders them)
 * and no whitespace, so that two agents, or an agent and this service, hash the
 * same messages to the same digest whatever order their JSON library wrote the
 * keys in. Strings and numbers are written as `JSON.stringify` writes them, which
 * is the serialization RFC 8785 adopts; values JSON cannot carry are dropped or
 * nulled the same way `JSON.stringify` does, so the digest covers exactly what
 * went over the wire.
 */
export function canonicalJson(value: unknown): string {
  return write(value) ?? "null";
}

function write(value: unknown): string | undefined {
  if (value === null || typeof value !== "object") return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map((item) => write(item) ?? "null").join(",")}]`;
  const members: string[] = [];
  for (const key of Object.keys(value).sort()) {
    const written = write((value as Record<string, unknown>)[key]);
    if (written !== undefined) members.push(`${JSON.stringify(key)}:${written}`);
  }
  return `{${members.join(",")}}`;
}
