/**
 * Splicing a compaction result into a conversation that kept growing.
 *
 * A compaction runs while the agent goes on appending, so the result answers
 * for the messages as they were when it was requested: `replaces` says how
 * many leading messages it stands for and the digest of their canonical JSON.
 * If those messages are still there, unchanged, they are swapped for the
 * result's messages and everything appended since is kept. If any of them
 * was edited, dropped, inserted into or reordered in the meantime, swapping
 * would silently rewrite or lose history, so the result is refused as stale.
 */
import { replacesOf, type Replaces } from "../core/replaces.js";

/** What a splice needs of a result: a webhook's or a job's `result`, or a core Result with its `replacesOf`. */
export interface CompactionSwap {
  readonly messages: readonly unknown[];
  readonly replaces: Replaces;
}

export class StaleCompactionError extends Error {
  override readonly name = "StaleCompactionError";

  constructor(
    /** How many leading messages the result replaces. */
    readonly count: number,
    /** Their digest when the compaction was requested. */
    readonly expectedDigest: string,
    /** The digest of the first `count` messages now, or null when there are fewer than `count`. */
    readonly actualDigest: string | null,
  ) {
    super(
      actualDigest === null
        ? `stale compaction: it replaces ${count} messages but the conversation now has fewer`
        : `stale compaction: the first ${count} messages changed since it was requested (digest ${actualDigest}, expected ${expectedDigest})`,
    );
  }
}

/**
 * `[...result.messages, ...currentMessages.slice(count)]` when the first
 * `result.replaces.count` messages of `currentMessages` are the ones the
 * result was made from; throws {@link StaleCompactionError} otherwise. The
 * result's messages are in the shape the request sent, so they are returned
 * as the caller's message type.
 */
export function applyCompaction<M>(currentMessages: readonly M[], result: CompactionSwap): M[] {
  const { count, digest } = checkedSwap(result);
  const actual = count <= currentMessages.length ? replacesOf(currentMessages.slice(0, count)).digest : null;
  if (actual !== digest) throw new StaleCompactionError(count, digest, actual);
  return [...(result.messages as readonly M[]), ...currentMessages.slice(count)];
}

function checkedSwap(result: CompactionSwap): Replaces {
  if (result === null || typeof result !== "object" || !Array.isArray(result.messages)) {
    throw new TypeError("result.messages: must be the compaction result's message list");
  }
  const replaces = result.replaces as Partial<Replaces> | undefined;
  if (replaces === undefined || replaces === null) {
    throw new TypeError("result.replaces: missing; pass the service's result, or a core Result with replaces: replacesOf(requestMessages)");
  }
  if (!Number.isInteger(replaces.count) || replaces.count! < 0) throw new TypeError("result.replaces.count: must be a whole number, 0 or more");
  if (typeof replaces.digest !== "string") throw new TypeError("result.replaces.digest: must be a SHA-256 hex string");
  return { count: replaces.count!, digest: replaces.digest };
}
