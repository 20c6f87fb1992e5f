import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { applyCompaction, StaleCompactionError } from "../../src/client/applyCompaction.js";
import { createCompactor } from "../../src/core/compactor.js";
import { NothingToCompactError } from "../../src/core/errors.js";
import { parseConversation } from "../../src/core/formats/parseConversation.js";
import { replacesOf } from "../../src/core/replaces.js";
import { checkToolPairing } from "../../src/core/toolPairing.js";
import { reactConversationArbitrary, type GeneratedConversation } from "../helpers/conversations.js";
import { scriptedSummarizer } from "../helpers/scriptedSummarizer.js";

/**
 * A conversation and the moment a compaction was requested: the first
 * `requested` messages went to the compactor, the rest were appended while it
 * ran. The cut falls anywhere, mid-round included (calls sent, results not
 * yet), because an agent asks whenever its threshold trips.
 */
const grownHistories = reactConversationArbitrary({ maxTurns: 5, maxRounds: 12, maxResultChars: 6_000, pendingCalls: true }).chain(
  (generated) => fc.integer({ min: 1, max: generated.messages.length }).map((requested) => ({ generated, requested })),
);

const compactorSettings = fc.record({
  contextWindow: fc.integer({ min: 8_000, max: 60_000 }),
  reserveTokens: fc.integer({ min: 1_000, max: 4_000 }),
  keepRecentTokens: fc.integer({ min: 200, max: 1_500 }),
});

/** Compacts the first `requested` messages as the service would, contract included; null when there is nothing to compact. */
async function compactPrefix(generated: GeneratedConversation, requested: number, settings: object) {
  const sent = generated.messages.slice(0, requested);
  const input = hasSystem(generated) ? { system: (generated.input as { system: unknown }).system, messages: sent } : sent;
  const compactor = createCompactor({ settings, summarizer: scriptedSummarizer() })!;
  try {
    const result = await compactor.compact(parseConversation(input, generated.format), { reason: "threshold" });
    return { ...result, replaces: replacesOf(sent) };
  } catch (err) {
    if (err instanceof NothingToCompactError) return null;
    throw err;
  }
}

function hasSystem(generated: GeneratedConversation): boolean {
  return typeof generated.input === "object" && generated.input !== null && "system" in generated.input;
}

function callIds(issues: readonly { toolCallId: string }[]): string[] {
  return issues.map((issue) => issue.toolCallId).sort();
}

describe("applyCompaction over histories that grew while the compaction ran", () => {
  it("keeps every message appended after the request, in order, behind the result's messages", async () => {
    await fc.assert(
      fc.asyncProperty(grownHistories, compactorSettings, async ({ generated, requested }, settings) => {
        const result = await compactPrefix(generated, requested, settings);
        if (result === null) return;
        const spliced = applyCompaction(generated.messages, result);
        expect(spliced.slice(0, result.messages.length)).toEqual(result.messages);
        const appended = generated.messages.slice(requested);
        expect(spliced).toHaveLength(result.messages.length + appended.length);
        appended.forEach((message, i) => expect(spliced[result.messages.length + i]).toBe(message));
      }),
      { numRuns: 150 },
    );
  });

  it("gives a conversation whose tool calls and results still pair up", async () => {
    await fc.assert(
      fc.asyncProperty(grownHistories, compactorSettings, async ({ generated, requested }, settings) => {
        const result = await compactPrefix(generated, requested, settings);
        if (result === null) return;
        const spliced = applyCompaction(generated.messages, result);
        const before = checkToolPairing(parseConversation(generated.messages, generated.format).messages);
        const after = checkToolPairing(parseConversation(spliced, generated.format).messages);
        expect(after.orphanResults).toEqual([]);
        // A call still waiting for its result before the splice is still waiting after it, and no other.
        expect(callIds(after.unansweredCalls)).toEqual(callIds(before.unansweredCalls));
      }),
      { numRuns: 150 },
    );
  });
});

type Edit =
  | { readonly kind: "change"; readonly index: number; readonly leaf: number }
  | { readonly kind: "delete"; readonly index: number }
  | { readonly kind: "insert"; readonly index: number }
  | { readonly kind: "reorder"; readonly index: number; readonly other: number };

/** An edit touching at least one of the first `count` messages; indexes are fractions scaled at use. */
const edits: fc.Arbitrary<Edit> = fc.oneof(
  fc.record({ kind: fc.constant("change" as const), index: fc.nat(), leaf: fc.nat() }),
  fc.record({ kind: fc.constant("delete" as const), index: fc.nat() }),
  fc.record({ kind: fc.constant("insert" as const), index: fc.nat() }),
  fc.record({ kind: fc.constant("reorder" as const), index: fc.nat(), other: fc.nat() }),
);

/** Paths to every string in `value`, the places a subtle edit can hide. */
function stringLeaves(value: unknown, path: (string | number)[] = []): (string | number)[][] {
  if (typeof value === "string") return [path];
  if (value === null || typeof value !== "object") return [];
  return Object.entries(value).flatMap(([key, child]) => stringLeaves(child, [...path, Array.isArray(value) ? Number(key) : key]));
}

/** `value` with one character appended to the string at `path`; the rest shared. */
function withEditedLeaf(value: unknown, path: readonly (string | number)[]): unknown {
  if (path.length === 0) return `${value as string}.`;
  const [head, ...rest] = path;
  if (Array.isArray(value)) return value.map((child, i) => (i === head ? withEditedLeaf(child, rest) : child));
  const record = value as Record<string, unknown>;
  return { ...record, [head!]: withEditedLeaf(record[head!], rest) };
}

function applyEdit(messages: readonly unknown[], count: number, edit: Edit): unknown[] {
  const out = [...messages];
  const index = edit.index % count;
  switch (edit.kind) {
    case "change": {
      const leaves = stringLeaves(out[index]);
      out[index] = withEditedLeaf(out[index], leaves[edit.leaf % leaves.length]!);
      return out;
    }
    case "delete":
      out.splice(index, 1);
      return out;
    case "insert":
      out.splice(index, 0, { role: "user", content: `inserted at ${index}` });
      return out;
    case "reorder": {
      const other = edit.other % out.length;
      [out[index], out[other]] = [out[other], out[index]];
      return out;
    }
  }
}

describe("applyCompaction after an edit inside the replaced prefix", () => {
  it("refuses the result as stale, whether a message was changed, deleted, inserted or moved", () => {
    fc.assert(
      fc.property(grownHistories, edits, ({ generated, requested }, edit) => {
        const sent = generated.messages.slice(0, requested);
        const current = applyEdit(generated.messages, requested, edit);
        // Swapping two equal messages is no edit at all.
        fc.pre(replacesOf(current.slice(0, requested)).digest !== replacesOf(sent).digest || current.length < requested);
        const result = { messages: [{ role: "user", content: "summary" }], replaces: replacesOf(sent) };
        expect(() => applyCompaction(current, result)).toThrow(StaleCompactionError);
      }),
      { numRuns: 500 },
    );
  });
});
