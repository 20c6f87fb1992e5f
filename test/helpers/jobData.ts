/**
 * Job data as the API queues it, for tests that add jobs without the API:
 * every field a job must carry, with a fresh submission id, and whatever a
 * test cares about given as overrides.
 */
import { randomUUID } from "node:crypto";
import type { CompactionJobData } from "../../src/queue/compactionJob.js";

export function testJobData(overrides: Partial<CompactionJobData> = {}): CompactionJobData {
  return {
    tenant: "acme",
    replaces: { count: 0, digest: "" },
    contextWindow: 100_000,
    settings: {},
    reason: "threshold",
    submissionId: randomUUID(),
    requestDigest: "",
    ...overrides,
  };
}
