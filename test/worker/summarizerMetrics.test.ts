import { describe, expect, it } from "vitest";
import { DEGRADATION_CAUSES } from "../../src/core/degradation.js";
import { createMetrics } from "../../src/metrics/metrics.js";
import { createLogger } from "../../src/telemetry/logger.js";
import { summarizerMetrics } from "../../src/worker/summarizerMetrics.js";
import { logLines } from "../helpers/logLines.js";

async function countedOutcomes(outcome: Parameters<ReturnType<typeof summarizerMetrics>>[0]["outcome"]): Promise<Record<string, number>> {
  const metrics = createMetrics();
  const count = summarizerMetrics(metrics, createLogger("test", "warn", logLines().stream));
  count({ kind: "history", outcome, durationMs: 12 });
  const { values } = await metrics.summarizerRequestsTotal.get();
  return Object.fromEntries(values.filter((v) => v.value > 0).map((v) => [String(v.labels.outcome), v.value]));
}

describe("compactd_summarizer_requests_total", () => {
  it("counts an empty summary as empty, not as a call that worked", async () => {
    expect(await countedOutcomes("empty")).toEqual({ empty: 1 });
  });

  it.each(DEGRADATION_CAUSES)("counts a call that failed as %s under that outcome", async (cause) => {
    expect(await countedOutcomes(cause)).toEqual({ [cause]: 1 });
  });

  it("counts a summary the compactor kept as ok", async () => {
    expect(await countedOutcomes("ok")).toEqual({ ok: 1 });
  });
});
