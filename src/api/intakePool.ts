/**
 * Where a POST's CPU work runs: on the event loop for a small body, on a pool
 * of intake threads for a large one (jsonBodies.ts draws the line).
 *
 * Parsing, validating, digesting, planning the cut of and compressing a
 * large conversation is CPU work in proportion to its size (issue 8 measured
 * one 20 MiB body holding the event loop for 2.4-2.9 s); on the event loop,
 * no other request, `/healthz` probe or Redis reply is served meanwhile, so a
 * few large bodies made the liveness probe fail and the pod restart. On a
 * thread, the event loop only moves bytes in and out.
 *
 * The pool is piscina: worker threads that are started once and reused (a
 * thread loads the tokenizer's tables once, not per request), a queue for
 * tasks beyond the threads, and aborting a running task by terminating its
 * thread (the only way to stop synchronous JavaScript), which replaces the
 * thread. Hand-written, each of those is a source of leaks and races.
 *
 * Each request's work has a deadline (COMPACTD_INTAKE_DEADLINE_MS), counted
 * from when a thread takes it: past it the thread is terminated and the
 * request answered 503 naming the limit. The work queues nothing (the route
 * does, after it), so nothing is left half-queued. Closing (on SIGTERM)
 * abandons the work in flight the same way, so a heavy request cannot hold
 * shutdown past its deadline.
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { MessageChannel } from "node:worker_threads";
import { Piscina } from "piscina";
import { ErrorCodes } from "../client/errorCodes.js";
import { timerDelay } from "../core/timerDelay.js";
import { ApiError, apiErrorFrom, RETRY_AFTER_SECONDS } from "./apiError.js";
import { batchFromThread, compactionFromThread, type ThreadAnswer, type ThreadTask } from "./intakeThread.js";
import { UnparsedJson } from "./jsonBodies.js";
import {
  examineBatch,
  examineCompaction,
  type BatchTask,
  type CompactionTask,
  type ExaminedBatch,
  type ExaminedCompaction,
  type IntakeTask,
} from "./requestExamination.js";

export interface IntakeRunnerOptions {
  /** COMPACTD_INTAKE_THREADS. */
  readonly threads: number;
  /** COMPACTD_INTAKE_DEADLINE_MS. */
  readonly deadlineMs: number;
}

export interface IntakeRunner {
  /** Examines a compaction request, its body parsed already or left as bytes for a thread. */
  compaction(task: CompactionTask): Promise<ExaminedCompaction>;
  batch(task: BatchTask): Promise<ExaminedBatch>;
  /** Abandons the work in flight (each request answered 503, nothing queued) and stops the threads. */
  close(): Promise<void>;
}

/** How long an idle thread is kept: long enough to serve the next large body warm. */
const IDLE_THREAD_MS = 60_000;

const DEADLINE = Symbol("deadline");
const SHUTDOWN = Symbol("shutdown");

export function createIntakeRunner(options: IntakeRunnerOptions): IntakeRunner {
  const pool = new Piscina<ThreadTask, ThreadAnswer>({
    filename: threadScript(),
    minThreads: 0,
    maxThreads: options.threads,
    idleTimeout: IDLE_THREAD_MS,
  });
  const inFlight = new Set<AbortController>();
  let closing = false;

  const onThread = async (task: IntakeTask & { readonly body: UnparsedJson }): Promise<ThreadAnswer> => {
    if (closing) throw shuttingDown();
    const bytes = ownBuffer(task.body.bytes);
    const controller = new AbortController();
    const { port1, port2 } = new MessageChannel();
    let deadline: NodeJS.Timeout | undefined;
    port1.once("message", () => {
      deadline = setTimeout(() => controller.abort(DEADLINE), timerDelay(options.deadlineMs));
    });
    inFlight.add(controller);
    try {
      return await pool.run({ task: { ...task, body: bytes }, started: port2 }, { signal: controller.signal, transferList: [bytes.buffer, port2] });
    } catch (err) {
      if (controller.signal.reason === DEADLINE) throw deadlineExceeded(options.deadlineMs);
      if (controller.signal.reason === SHUTDOWN) throw shuttingDown();
      throw err;
    } finally {
      clearTimeout(deadline);
      port1.close();
      inFlight.delete(controller);
    }
  };

  return {
    async compaction(task) {
      if (!(task.body instanceof UnparsedJson)) return examineCompaction(task);
      return compactionFromThread(examinedOf(await onThread({ ...task, body: task.body }), "compaction").examined);
    },
    async batch(task) {
      if (!(task.body instanceof UnparsedJson)) return examineBatch(task);
      return batchFromThread(examinedOf(await onThread({ ...task, body: task.body }), "batch").examined);
    },
    async close() {
      closing = true;
      for (const controller of inFlight) controller.abort(SHUTDOWN);
      await pool.destroy();
    },
  };
}

/** A thread's examination of a `kind` request, or the ApiError it refused the request with. */
function examinedOf<K extends IntakeTask["kind"]>(answer: ThreadAnswer, kind: K): Extract<ThreadAnswer, { kind: K }> {
  if (!answer.ok) throw apiErrorFrom(answer.error);
  if (answer.kind !== kind) throw new Error(`an intake thread answered a ${kind} with a ${answer.kind}`);
  return answer as Extract<ThreadAnswer, { kind: K }>;
}

/**
 * The thread's script. Built, it sits beside this file. Run from the
 * TypeScript sources (vitest), a thread cannot load TypeScript, so it runs the
 * build of the same file: `npm test` builds dist/ first.
 */
function threadScript(): string {
  const fromSources = import.meta.url.endsWith(".ts");
  const script = fileURLToPath(new URL(fromSources ? "../../dist/api/intakeThread.js" : "./intakeThread.js", import.meta.url));
  if (!existsSync(script)) throw new Error(`the intake thread's script ${script} is missing; run npm run build`);
  return script;
}

/**
 * The body's bytes in an ArrayBuffer of their own, to move to the thread
 * without copying. fastify's body is a fresh concatenation, which is one
 * (Node pools only buffers under 4 KiB); anything else is copied.
 */
function ownBuffer(bytes: Buffer): Uint8Array<ArrayBuffer> {
  const owned = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength && bytes.buffer instanceof ArrayBuffer;
  return owned ? new Uint8Array(bytes.buffer as ArrayBuffer) : new Uint8Array(bytes);
}

function deadlineExceeded(deadlineMs: number): ApiError {
  return new ApiError(
    503,
    ErrorCodes.intakeDeadline,
    `taking this request in took longer than the ${deadlineMs} ms one request may take (COMPACTD_INTAKE_DEADLINE_MS); nothing was queued. Retry later, or send a shorter conversation`,
    undefined,
    undefined,
    { "retry-after": String(RETRY_AFTER_SECONDS) },
  );
}

function shuttingDown(): ApiError {
  return new ApiError(503, ErrorCodes.shuttingDown, "this API process is shutting down; nothing was queued; retry shortly", undefined, undefined, {
    "retry-after": String(RETRY_AFTER_SECONDS),
  });
}
