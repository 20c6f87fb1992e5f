/**
 * Rebuilds the message list after a summary exists.
 */
import type { Message } from "./message.js";
import type { Preparation } from "./prepare.js";
import type { SummaryMessage } from "./summaryEnvelope.js";

/**
 * What a compaction returns unchanged: the leading system messages and the
 * verbatim tail, as the objects received. Taken before the summarizer is
 * called, so that a compaction waiting on it holds these and not the whole
 * conversation (the summarized range, most of it, can go).
 */
export interface KeptMessages {
  readonly head: readonly unknown[];
  readonly tail: readonly unknown[];
}

/** The messages before `systemEnd` and from `firstKeptIndex` on, as their original objects. */
export function keptMessages(messages: readonly Message[], preparation: Pick<Preparation, "systemEnd" | "firstKeptIndex">): KeptMessages {
  return {
    head: messages.slice(0, preparation.systemEnd).map((m) => m.raw),
    tail: messages.slice(preparation.firstKeptIndex).map((m) => m.raw),
  };
}

/**
 * Returns the system prompt, the summary message (built once by the caller,
 * who also counts its tokens), and the verbatim tail. Nothing
 * between the system prompt and the cut point survives. Kept messages are the
 * original objects, so their JSON comes back exactly as it came in.
 */
export function apply(kept: KeptMessages, summary: SummaryMessage): unknown[] {
  return [...kept.head, summary, ...kept.tail];
}
