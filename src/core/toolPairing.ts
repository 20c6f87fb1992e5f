/**
 * Whether every tool result answers a call and every call is answered.
 *
 * Providers reject a conversation with a tool result whose call is missing, and
 * most reject a call that was never answered once the conversation moves on.
 * Those are the failures compaction can cause by cutting in the wrong place, so
 * the parser, the tests and the client all check them with this one function.
 */
import type { Message } from "./message.js";

export interface ToolPairingIssue {
  /** The `Message.index` of the message holding the result or the call. */
  readonly index: number;
  readonly toolCallId: string;
}

export interface ToolPairing {
  /** Results whose call does not appear in an earlier message. */
  readonly orphanResults: ToolPairingIssue[];
  /**
   * Calls no later message answers. Not an error on its own: an agent that is
   * mid-round has issued calls whose results it has not sent yet.
   */
  readonly unansweredCalls: ToolPairingIssue[];
}

export function checkToolPairing(messages: readonly Message[]): ToolPairing {
  const called = new Set<string>();
  const unanswered = new Map<string, number>();
  const orphanResults: ToolPairingIssue[] = [];
  for (const message of messages) {
    for (const block of message.blocks) {
      if (block.type !== "toolResult") continue;
      if (called.has(block.toolCallId)) unanswered.delete(block.toolCallId);
      else orphanResults.push({ index: message.index, toolCallId: block.toolCallId });
    }
    // Calls are registered after the message's results so that a result can
    // only answer a call made in an earlier message.
    for (const block of message.blocks) {
      if (block.type !== "toolCall") continue;
      called.add(block.id);
      unanswered.set(block.id, message.index);
    }
  }
  const unansweredCalls = [...unanswered].map(([toolCallId, index]) => ({ index, toolCallId }));
  return { orphanResults, unansweredCalls };
}
