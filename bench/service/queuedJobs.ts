/**
 * Compaction jobs put straight into a queue, bypassing HTTP but not the API's
 * code: each job's data is what `POST /v1/compactions` would store for the
 * same request (the API's schema, parser and intake, so the same compressed
 * payload and token counts), and it is added by the API's own submit, its
 * payload in a key of its own beside it.
 *
 * The concurrency scenario feeds workers this way so that the two cores go to
 * the workers being measured rather than to an API process, and the Redis
 * scenario measures exactly the stored job.
 */
import { randomUUID } from "node:crypto";
import { takenJson } from "../../src/api/asciiJson.js";
import { intake } from "../../src/api/compactionIntake.js";
import { CanonicalMessages } from "../../src/api/requestDigest.js";
import { compactionRequestSchema, parseBody } from "../../src/api/requestSchemas.js";
import { newJobId, type CompactionSubmission } from "../../src/queue/compactionJob.js";
import type { CompactionQueue } from "../../src/queue/compactionQueue.js";
import { submitWithPayload, type PayloadStore } from "../../src/queue/payloadStore.js";
import { BENCH_TENANT } from "./serviceProcesses.js";
import type { Workload } from "./workload.js";

/** The job the API would queue for `workload` (data and payload), calling back to `callbackUrl` if given. */
export async function submissionFor(workload: Workload, callbackUrl?: string): Promise<CompactionSubmission> {
  const request = { ...workload.request, ...(callbackUrl !== undefined && { callbackUrl }) };
  const body = parseBody(compactionRequestSchema, request);
  const decision = intake(body, {
    tenant: BENCH_TENANT,
    fieldPrefix: "",
    requestDigest: "",
    canonical: new CanonicalMessages(),
    ...(callbackUrl !== undefined && { callbackUrl }),
    // The body's bytes as the API takes them in (asciiJson.ts) and stores them as its payload.
    requestJson: takenJson(Buffer.from(JSON.stringify(request))),
  });
  if (decision.kind === "refused") throw decision.error;
  if (decision.kind !== "job") throw new Error(`${workload.name}: the API would find nothing to compact`);
  return { data: decision.data, payload: decision.payload };
}

/**
 * Adds `count` jobs cycling over `submissions`, `parallel` adds at a time,
 * each a new submission under a new id as separate requests would be; returns
 * the ids, job `i` carrying `submissions[i % submissions.length]`.
 */
export async function addJobs(
  queue: CompactionQueue,
  payloads: PayloadStore,
  submissions: readonly CompactionSubmission[],
  count: number,
  parallel = 32,
): Promise<string[]> {
  const ids = new Array<string>(count);
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < count) {
      const i = next++;
      const id = newJobId();
      const outcome = await submitWithPayload(queue, payloads, id, newSubmission(submissions[i % submissions.length]!), false);
      if (outcome.kind !== "created") throw new Error(`adding job ${i} gave ${outcome.kind}`);
      ids[i] = id;
    }
  };
  await Promise.all(Array.from({ length: parallel }, lane));
  return ids;
}

/** `submission` again, as another request with the same body would submit it. */
export function newSubmission({ data, payload }: CompactionSubmission): CompactionSubmission {
  return { data: { ...data, submissionId: randomUUID() }, payload };
}
