/**
 * An intake thread: what runs a large request's CPU work off the event loop
 * (see intakePool.ts), and what crosses between it and the event loop.
 *
 * The body arrives as its JSON bytes, moved rather than copied; what goes back
 * is the examination with its errors as plain data, because a structured
 * clone of an Error keeps only its message.
 */
import type { MessagePort } from "node:worker_threads";
import { ApiError, apiErrorData, apiErrorFrom, type ApiErrorData } from "./apiError.js";
import { takenJson } from "./asciiJson.js";
import { parseJson } from "./jsonBodies.js";
import { examineBatch, examineCompaction, type ExaminedBatch, type ExaminedCompaction, type IntakeTask } from "./requestExamination.js";

export interface ThreadTask {
  /** The task, its body the request's JSON bytes. */
  readonly task: IntakeTask & { readonly body: Uint8Array };
  /** Told when this thread starts on the task: its deadline runs from then, not from when it was queued. */
  readonly started: MessagePort;
}

/** What a structured clone brings back: errors as plain data; bytes (a job's compressed payload) as a Uint8Array. */
type Wire<T> = T extends ApiError ? ApiErrorData : T extends Uint8Array ? Uint8Array : T extends object ? { readonly [K in keyof T]: Wire<T[K]> } : T;

export type ThreadAnswer =
  | { readonly ok: true; readonly kind: "compaction"; readonly examined: Wire<ExaminedCompaction> }
  | { readonly ok: true; readonly kind: "batch"; readonly examined: Wire<ExaminedBatch> }
  | { readonly ok: false; readonly error: ApiErrorData };

export default function takeIn({ task, started }: ThreadTask): ThreadAnswer {
  started.postMessage(null);
  started.close();
  try {
    const json = takenJson(Buffer.from(task.body.buffer, task.body.byteOffset, task.body.byteLength));
    const body = parseJson(json);
    if (task.kind === "compaction") {
      const examined = examineCompaction({ ...task, body, json });
      const { decision } = examined;
      return { ok: true, kind: "compaction", examined: { ...examined, decision: decision.kind === "refused" ? { kind: "refused", error: apiErrorData(decision.error) } : decision } };
    }
    const examined = examineBatch({ ...task, body });
    const { decisions } = examined;
    return { ok: true, kind: "batch", examined: { ...examined, decisions: "refused" in decisions ? { refused: apiErrorData(decisions.refused) } : decisions } };
  } catch (err) {
    if (err instanceof ApiError) return { ok: false, error: apiErrorData(err) };
    throw err;
  }
}

/** A compaction's examination as the thread answered it, its errors ApiErrors again. */
export function compactionFromThread(examined: Wire<ExaminedCompaction>): ExaminedCompaction {
  const { decision } = examined;
  return { ...examined, decision: decision.kind === "refused" ? { kind: "refused", error: apiErrorFrom(decision.error) } : decision };
}

/** A batch's examination as the thread answered it, its errors ApiErrors again. */
export function batchFromThread(examined: Wire<ExaminedBatch>): ExaminedBatch {
  const { decisions } = examined;
  return { ...examined, decisions: "refused" in decisions ? { refused: apiErrorFrom(decisions.refused) } : decisions };
}
