import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkToolPairing } from "../../src/core/toolPairing.js";
import { parseConversation } from "../../src/core/formats/parseConversation.js";
import type { Behaviour, RecordedRequest } from "../helpers/fakeAnthropic.js";
import { markedRequest } from "../helpers/markedConversation.js";
import { startServiceHarness, type ServiceHarness } from "../helpers/serviceHarness.js";

/** Every way a summarization call can go wrong, each for good: no attempt ever succeeds. */
const FAULTS: Readonly<Record<string, Behaviour>> = {
  "rate-limited": { kind: "error", status: 429 },
  overloaded: { kind: "error", status: 529 },
  "server-error": { kind: "error", status: 500 },
  "stalled-mid-stream": { kind: "stall", afterEvents: 3 },
  "silent-before-headers": { kind: "silent" },
  "pings-only": { kind: "keepAlive", everyMs: 100 },
  "cut-off-stream": { kind: "cutOff", afterEvents: 4 },
  "error-event-in-stream": { kind: "errorEvent", afterEvents: 4 },
  "context-overflow": { kind: "overflow" },
  "model-not-found": { kind: "error", status: 404, message: "model: claude-nope" },
  "stopped-at-token-cap": { kind: "reply", stopReason: "max_tokens" },
  "paused-turn": { kind: "reply", stopReason: "pause_turn" },
  refusal: { kind: "reply", text: "I can't help with that.", stopReason: "refusal" },
};

function script(request: RecordedRequest): Behaviour {
  for (const [name, behaviour] of Object.entries(FAULTS)) if (request.userText.includes(`fault:${name} `)) return behaviour;
  return { kind: "reply" };
}

/** Each job's budget: two attempts of two summarizer calls, a stall costing at most 1 s each. */
const STALL_TIMEOUT_MS = 1_000;
const JOB_BUDGET_SECONDS = 30;

let h: ServiceHarness;
beforeAll(async () => {
  h = await startServiceHarness("faults", { script, env: { COMPACTD_JOB_ATTEMPTS: "2", WORKER_CONCURRENCY: "16" } });
});
afterAll(async () => {
  await h.close();
});

describe("summarizer faults", () => {
  it("end every job completed, degraded but with a valid shrunk conversation, within its budget", async () => {
    const submitted = await Promise.all(
      Object.keys(FAULTS).map(async (name) => {
        const request = markedRequest(`fault:${name}`, { settings: { reserveTokens: 4_000, stallTimeoutMs: STALL_TIMEOUT_MS } });
        const { body } = await h.submit(request);
        return { name, id: String(body.id), messages: request.messages as unknown[] };
      }),
    );
    const views = await Promise.all(submitted.map(async (job) => ({ ...job, view: await h.view(job.id, JOB_BUDGET_SECONDS) })));
    for (const { name, view, messages } of views) {
      expect(view.status, name).toBe("completed");
      const result = view.result as { degraded: boolean; degradedReason: string; messages: unknown[] };
      expect(result.degraded, name).toBe(true);
      expect(result.degradedReason, name).not.toBe("");
      expect(result.messages.length, name).toBeLessThan(messages.length);
      expect(checkToolPairing(parseConversation(result.messages).messages).orphanResults, name).toEqual([]);
    }
    const pingsOnly = views.find((job) => job.name === "pings-only")!.view.result as { degradation: { cause: string }[] };
    expect(new Set(pingsOnly.degradation.map((d) => d.cause))).toEqual(new Set(["stalled"]));
    const counted = await h.workerMetrics.registry.getSingleMetricAsString("compactd_summarizer_requests_total");
    for (const outcome of ["error", "stalled", "rejected", "overflow", "truncated", "unfinished", "refused"]) {
      expect(counted, outcome).toMatch(new RegExp(`outcome="${outcome}"\\} [1-9]`));
    }
    // Each error and rejection is counted once more under the provider's
    // status, or none without one (a cut-off stream, an error event). Which
    // calls end as errors rather than stalls depends on timing; the split must add up.
    const byStatus = await h.workerMetrics.registry.getSingleMetricAsString("compactd_summarizer_errors_total");
    const statuses = [...byStatus.matchAll(/status_code="(\w+)"\} (\d+)/g)].filter((match) => match[2] !== "0");
    expect(statuses.map((match) => match[1]).filter((status) => !["429", "529", "500", "404", "none"].includes(status!))).toEqual([]);
    const errors = Number(/outcome="error"\} (\d+)/.exec(counted)?.[1]) + Number(/outcome="rejected"\} (\d+)/.exec(counted)?.[1]);
    expect(statuses.reduce((sum, match) => sum + Number(match[2]), 0)).toBe(errors);
    // Every job's wait, submission to outcome, is timed once.
    const latency = await h.workerMetrics.registry.getSingleMetricAsString("compactd_job_latency_seconds");
    const timed = [...latency.matchAll(/^compactd_job_latency_seconds_count\{[^}]*\} (\d+)$/gm)].reduce((sum, match) => sum + Number(match[1]), 0);
    expect(timed).toBe(submitted.length);
  }, 60_000);

  /** Submits a job the fake model meets with `fault`, expects it completed in one attempt, and gives its result. */
  async function completedInOneAttempt(fault: string): Promise<{ degradation: { cause: string }[]; summary: string; degradedReason: string }> {
    const { body } = await h.submit(markedRequest(fault, { settings: { reserveTokens: 4_000 } }));
    const view = await h.view(String(body.id), JOB_BUDGET_SECONDS);
    expect(view).toMatchObject({ status: "completed", attempts: 1 });
    return view.result as { degradation: { cause: string }[]; summary: string; degradedReason: string };
  }

  it("gives up the retries that cannot help: an overflowing summarization is not retried", async () => {
    await completedInOneAttempt("fault:context-overflow");
  });

  it("gives up the retries that cannot help: a model that refused is not asked again", async () => {
    const result = await completedInOneAttempt("fault:refusal");
    expect(new Set(result.degradation.map((d) => d.cause))).toEqual(new Set(["refused"]));
    expect(result.summary).not.toContain("I can't help with that.");
  });

  it("gives up the retries that cannot help: a request the API rejects is not retried, and the result says what the API said", async () => {
    const result = await completedInOneAttempt("fault:model-not-found");
    expect(result.degradation.map((d) => d.cause)).toContain("rejected");
    expect(result.degradedReason).toContain("model: claude-nope");
  });
});
