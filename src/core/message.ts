/**
 * The message model every part of the core works on.
 *
 * Agents send conversations in the Anthropic Messages shape or the OpenAI Chat
 * Completions shape. The core never rewrites what it keeps: each {@link Message}
 * holds the object it was parsed from in `raw`, and the verbatim tail is built
 * from those objects, so unknown fields and unusual encodings survive untouched.
 * The normalized `blocks` exist only so that token counting, serialization and
 * tool pairing can be written once instead of once per provider shape.
 */

/**
 * What a message is for the purposes of cutting.
 *
 * `toolResult` is the one that matters most: a message that answers a tool call
 * (an OpenAI `tool` message, or an Anthropic user message carrying
 * `tool_result` blocks) can never begin the kept tail, because the call it
 * answers would be summarized away and the provider would reject the orphan.
 */
export type MessageKind = "system" | "user" | "assistant" | "toolResult";

/** A provider-neutral view of one content block, used for counting and serializing. */
export type Block =
  | { readonly type: "text"; readonly text: string }
  | { readonly type: "thinking"; readonly text: string }
  | {
      readonly type: "toolCall";
      readonly id: string;
      readonly name: string;
      /** Parsed arguments; OpenAI's JSON-string arguments are parsed when they are valid JSON. */
      readonly input: unknown;
    }
  | {
      readonly type: "toolResult";
      readonly toolCallId: string;
      readonly text: string;
      readonly isError: boolean;
    }
  /**
   * Images and documents are priced at a fixed documented cost rather than
   * tokenized (their base64 payload says nothing about what the model is billed).
   * A document with a plain-text source also carries that text.
   */
  | { readonly type: "media"; readonly media: "image" | "document"; readonly text?: string }
  /**
   * Blocks whose meaning the core does not need (redacted thinking, server tool
   * blocks, block types newer than this code): counted by their JSON, passed
   * through verbatim, shown to the summarizer by their type name.
   */
  | { readonly type: "opaque"; readonly blockType: string; readonly json: string };

export interface Message {
  /** Position in the conversation's message list. */
  readonly index: number;
  /** The message exactly as it was received; kept messages are returned as this object. */
  readonly raw: unknown;
  readonly kind: MessageKind;
  readonly blocks: readonly Block[];
  /** The caller's stored-turn identifier (`turn_id`), which drives checkpoints. */
  readonly turnId: string | undefined;
}

export type ConversationFormat = "anthropic" | "openai";

export interface Conversation {
  readonly format: ConversationFormat;
  /**
   * Anthropic's top-level `system` value, passed through untouched. OpenAI
   * system and developer messages stay in `messages` with kind `system`.
   */
  readonly system: unknown;
  /** The text of the top-level system prompt, for counting. Empty when there is none. */
  readonly systemText: string;
  readonly messages: readonly Message[];
}
