/**
 * Where the facts the fidelity benchmark misses sit (`npm run bench:fidelity:gaps`).
 *
 * For each corpus session with a reference summary, every reference fact that
 * the summarizer prompt or the offline summary does not keep is listed with
 * where the session holds it: in the summarized range or only in the kept
 * tail, in which kind of block, at which character offset of how long a block,
 * and whether the transcript's clipping is what lost it. It changes nothing
 * and writes nothing: it is the map for deciding what the summaries should
 * keep, printed to the console.
 */
import { test } from "vitest";
import { createCompactor, OFFLINE_SUMMARIZER } from "../src/core/compactor.js";
import { parseConversation } from "../src/core/formats/parseConversation.js";
import type { Block, Message } from "../src/core/message.js";
import { serializeMessage } from "../src/core/serialize.js";
import { normalizeSettings } from "../src/core/settings.js";
import type { SummarizationRequest } from "../src/core/summarizer.js";
import { pricedParts } from "../src/core/tokenEstimator.js";
import { listCompactedSessions } from "../test/helpers/corpus.js";
import { containsWord, factsOf, type Fact } from "./referenceFacts.js";

const SETTINGS = normalizeSettings({ contextWindow: 200_000 });

interface Place {
  readonly message: number;
  readonly block: string;
  readonly offset: number;
  readonly length: number;
  /** The message's transcript line holds the fact. */
  readonly serialized: boolean;
}

function blockText(block: Block): string {
  switch (block.type) {
    case "text":
    case "thinking":
    case "toolResult":
      return block.text;
    case "toolCall":
      return `${block.name} ${JSON.stringify(block.input)}`;
    case "media":
      return block.text ?? "";
    case "opaque":
      return block.json;
  }
}

function blockKind(message: Message, block: Block): string {
  if (block.type === "toolCall") return `toolCall:${block.name}`;
  return `${message.kind}/${block.type}`;
}

/** Every block of `messages` holding `fact`, with its first offset. */
function placesOf(fact: Fact, messages: readonly Message[]): Place[] {
  const needle = fact.text.toLowerCase();
  const places: Place[] = [];
  for (const message of messages) {
    const serialized = containsWord(serializeMessage(message).toLowerCase(), needle);
    for (const block of message.blocks) {
      const text = blockText(block).toLowerCase();
      if (!containsWord(text, needle)) continue;
      places.push({ message: message.index, block: blockKind(message, block), offset: text.indexOf(needle), length: text.length, serialized });
    }
  }
  return places;
}

function describe(places: readonly Place[], limit = 3): string {
  return places
    .slice(0, limit)
    .map((p) => `#${p.message} ${p.block} @${p.offset}/${p.length}${p.serialized ? "" : " clipped"}`)
    .join("; ") + (places.length > limit ? `; +${places.length - limit}` : "");
}

test("where the missing reference facts sit", async () => {
  for (const session of listCompactedSessions()) {
    const requests: SummarizationRequest[] = [];
    const recorder = {
      name: "recording",
      async summarize(request: SummarizationRequest) {
        requests.push(request);
        return { text: "## Goal\n(recorded)", truncated: false };
      },
    };
    const conversation = parseConversation(session.input);
    await createCompactor({ settings: SETTINGS, summarizer: recorder })!.compact(conversation, { reason: "threshold" });
    const offline = await createCompactor({ settings: SETTINGS, summarizer: OFFLINE_SUMMARIZER })!.compact(parseConversation(session.input), {
      reason: "threshold",
    });
    const all = conversation.messages;
    const summarized = all.slice(0, offline.firstKeptIndex);
    const tail = all.slice(offline.firstKeptIndex);
    const facts = factsOf(session.reference, all.map((m) => pricedParts(m).parts.join("\n")).join("\n"));
    const prompt = requests.map((r) => `${r.system}\n${r.prompt}`).join("\n").toLowerCase();
    const summary = offline.summary.toLowerCase();

    const lines: string[] = [`\n=== ${session.name}: ${facts.length} facts, ${summarized.length} summarized, ${tail.length} kept ===`];
    let tailOnly = 0;
    let promptMissing = 0;
    let offlineMissing = 0;
    for (const fact of facts) {
      const needle = fact.text.toLowerCase();
      const inPrompt = containsWord(prompt, needle);
      const inOffline = containsWord(summary, needle);
      if (inPrompt && inOffline) continue;
      const head = placesOf(fact, summarized);
      const inTail = placesOf(fact, tail).length > 0;
      if (head.length === 0) {
        tailOnly++;
        if (!inOffline) lines.push(`  TAIL-ONLY ${fact.kind.padEnd(10)} ${JSON.stringify(fact.text)}`);
        continue;
      }
      if (!inPrompt) promptMissing++;
      if (!inOffline) offlineMissing++;
      // Missing from the final output of an offline compaction: neither the summary nor the tail has it.
      const where = `${inPrompt ? "" : "PROMPT "}${inOffline ? "" : inTail ? "OFFLINE (in tail) " : "OFFLINE FINAL "}`;
      lines.push(`  ${where.padEnd(26)} ${fact.kind.padEnd(10)} ${JSON.stringify(fact.text).padEnd(40)} ${describe(head)}`);
    }
    lines.push(`  -- tail only: ${tailOnly}; in the summarized range but missing from the prompt: ${promptMissing}, from the offline summary: ${offlineMissing}`);
    console.log(lines.join("\n"));
  }
});
