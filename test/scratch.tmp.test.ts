import { loadClaudeCodeSession } from "./helpers/corpus.js";
import { parseConversation, createCompactor, OFFLINE_SUMMARIZER, TokenEstimator } from "../src/core/index.js";
import {test} from "vitest";
test("x", async () => {
const input = loadClaudeCodeSession("/work/shared/corpus/spotter-claude-code/8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl");
const conv = parseConversation(input);
const c = createCompactor({ settings: { maxContextTokens: 200000 }, summarizer: OFFLINE_SUMMARIZER })!;
const r = await c.compact(conv, { reason: "manual" });
console.log(r.summary);
console.log({ ...r, messages: r.messages.length, summary: r.summary.length, checkpoint: !!r.checkpoint, tokens: new TokenEstimator().countText(r.summary) });
}, 60000);
