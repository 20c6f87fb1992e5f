/**
 * The worker's JSON logs, as an operator reads them: every failed summarizer
 * call with the provider's status code and attempt, every job's end with its
 * outcome and degraded reason, every refused callback; all with the job's
 * ids, and never a word of the conversation.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../src/telemetry/logger.js";
import type { RunningWorker } from "../../src/worker/runWorker.js";
import { runWorker } from "../../src/worker/runWorker.js";
import { fillerText } from "../helpers/conversations.js";
import { logLines } from "../helpers/logLines.js";
import { markedConversation, markedRequest } from "../helpers/markedConversation.js";
import { startServiceHarness, type ServiceHarness } from "../helpers/serviceHarness.js";
import { waitUntil } from "../helpers/waitUntil.js";

const MARKER = "fault:overloaded";
const log = logLines();
const records = (): Record<string, unknown>[] => log.lines;

let h: ServiceHarness;
let worker: RunningWorker;
beforeAll(async () => {
  let refused = false;
  h = await startServiceHarness("worker-logs", {
    workers: 0,
    env: { COMPACTD_JOB_ATTEMPTS: "2" },
    script: (request) => (request.userText.includes(`${MARKER} `) ? { kind: "error", status: 529 } : { kind: "reply" }),
    respond: () => (refused ? { status: 204 } : ((refused = true), { status: 503 })),
  });
  worker = await runWorker(h.config, { logger: createLogger("worker", "info", log.stream), onError: () => {} });
});
afterAll(async () => {
  await worker?.close();
  await h?.close();
});

describe("the worker's logs", () => {
  it("name each failed summarizer call's status and attempt, the job's end, and the refused callback, without the conversation", async () => {
    const { body } = await h.submit(markedRequest(MARKER, { conversationId: "conv-logs", reason: "threshold", callbackUrl: h.receiver.url() }));
    const id = String(body.id);
    expect((await h.view(id, 30)).status).toBe("completed");
    await waitUntil(() => h.receiver.received.length === 2, "the callback is delivered on its retry", 30_000);
    await waitUntil(() => records().some((r) => r.msg === "callback attempt failed; it will be retried"), "the refused callback is logged");

    const job = { jobId: id, tenant: "acme", conversationId: "conv-logs", reason: "threshold" };
    const failedCalls = records().filter((r) => r.msg === "summarizer call failed");
    expect(failedCalls.length).toBeGreaterThanOrEqual(2);
    for (const call of failedCalls) expect(call).toMatchObject({ ...job, level: "warn", statusCode: "529", summarizerOutcome: "error", component: "worker" });
    expect(new Set(failedCalls.map((call) => call.attempt))).toEqual(new Set([1, 2]));
    expect(records()).toContainEqual(expect.objectContaining({ ...job, attempt: 1, msg: "compaction attempt failed; the job will be retried" }));
    const finished = records().find((r) => r.msg === "compaction finished");
    expect(finished).toMatchObject({ ...job, attempt: 2, outcome: "degraded", level: "info", stillAboveThreshold: false });
    expect(String(finished?.degradedReason)).not.toBe("");
    expect(records()).toContainEqual(expect.objectContaining({ level: "warn", event: "compaction.completed", outcome: "rejected", attempt: 1 }));

    // Not a word of the conversation: no message text (each user message carries the marker) anywhere.
    const texts = markedConversation(MARKER).flatMap((message) => (typeof message.content === "string" ? [message.content.slice(0, 40)] : []));
    expect(texts.length).toBeGreaterThan(0);
    const written = records().map((record) => JSON.stringify(record));
    expect(written.filter((line) => line.includes(MARKER) || texts.some((text) => line.includes(text)))).toEqual([]);
  }, 90_000);

  it("warn at a job's end when its compacted context is still above the threshold, and say so", async () => {
    // 20000-token window, 4000 reserved: the newest message alone is about 25000 tokens, and it is kept whole.
    const request = markedRequest("too-large", { conversationId: "conv-above" });
    const messages = [...(request.messages as Record<string, unknown>[]), { role: "user", content: fillerText(100_000, 11) }];
    const { body } = await h.submit({ ...request, messages });
    const id = String(body.id);
    expect((await h.view(id, 30)).status).toBe("completed");
    await waitUntil(() => records().some((r) => r.msg === "compaction finished" && r.jobId === id), "the job's end is logged");
    const finished = records().find((r) => r.msg === "compaction finished" && r.jobId === id);
    expect(finished).toMatchObject({ jobId: id, conversationId: "conv-above", outcome: "completed", level: "warn", stillAboveThreshold: true });
    expect(Number(finished?.tokensAfter)).toBeGreaterThan(20_000 - 4_000);
  }, 60_000);
});
