/**
 * Rebuilds the message list after a summary exists.
 */
import type { Message } from "./message.js";
import type { Preparation } from "./prepare.js";
import type { SummaryMessage } from "./summaryEnvelope.js";

/**
 * Returns the system prompt, the summary message (built once by the caller,
 * who also counts its tokens), and the verbatim tail. Nothing
 * between the system prompt and the cut point survives. Kept messages are the
 * original objects, so their JSON comes back exactly as it came in.
 */
export function apply(messages: readonly Message[], preparation: Pick<Preparation, "systemEnd" | "firstKeptIndex">, summary: SummaryMessage): unknown[] {
  const out: unknown[] = [];
  for (let i = 0; i < preparation.systemEnd; i++) out.push(messages[i]!.raw);
  out.push(summary);
  for (let i = preparation.firstKeptIndex; i < messages.length; i++) out.push(messages[i]!.raw);
  return out;
}
