/**
 * Conversations whose summarization requests can be told apart at the fake
 * Anthropic API: every user request text carries a marker, and the
 * summarization prompt carries the transcript, so a fake's script can give
 * each test job its own fault.
 */
import { conversation, reactTurn, type RawMessage } from "./conversations.js";

/**
 * About 35k characters over five turns: with a 20000-token window and a 4000
 * reserve, most of it lies outside the 4000-token keep-recent budget.
 */
export function markedConversation(marker: string, turns = 5): RawMessage[] {
  return conversation(...Array.from({ length: turns }, () => reactTurn({ rounds: 3, toolResultChars: 2_000 }))).map((message) =>
    message.role === "user" && typeof message.content === "string" ? { ...message, content: `${marker} ${message.content}` } : message,
  );
}

/** A compaction request body for {@link markedConversation}. */
export function markedRequest(marker: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { messages: markedConversation(marker), contextWindow: 20_000, settings: { reserveTokens: 4_000 }, ...extra };
}
