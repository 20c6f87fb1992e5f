/**
 * Where the service's callbacks land in the bench, and when: the end of every
 * job's enqueue-to-callback latency. A real `node:http` server on 127.0.0.1,
 * on a thread of its own.
 *
 * Why a thread: an agent's callback receiver is a process of its own, and the
 * bench's main thread is not one. It also streams the fake LLM's replies,
 * sends the agent's requests or feeds the queue, and its event loop runs
 * hundreds of milliseconds late at two workers' load (a callback's answer
 * took 1.16 s on average in one run, measured by the worker). A receiver
 * there answers late for the bench's own reasons: the service, which cuts a
 * first delivery off after a second and queues it, was measured against its
 * load generator. On a thread the receiver has an event loop of its own and
 * waits only for a core, as a separate process would; the bench process's
 * CPU figures still include it.
 */
import { once } from "node:events";
import { performance } from "node:perf_hooks";
import { Worker } from "node:worker_threads";

export interface CallbackArrival {
  /** `performance.now()` of the bench process when the body had arrived. */
  readonly at: number;
  /** The result was the archive fallback: the summarizer failed, so the job is not the one being measured. */
  readonly degraded: boolean;
  readonly failed: boolean;
}

export interface CallbackClock {
  readonly url: string;
  /** Resolves when the callback of job `id` has arrived (at once if it already has). */
  arrival(id: string): Promise<CallbackArrival>;
  /** Every arrival so far, in order. */
  readonly arrivals: readonly (CallbackArrival & { readonly id: string })[];
  stop(): Promise<void>;
}

/** What the receiver thread posts for each callback; `epochMs` is the time the body had arrived, on the wall clock both threads share. */
interface ThreadArrival {
  readonly id: string;
  readonly epochMs: number;
  readonly degraded: boolean;
  readonly failed: boolean;
}

/**
 * The receiver thread (CommonJS, evaluated as it is: a worker thread does not
 * get vitest's TypeScript transform). It answers 204 as soon as a body has
 * arrived and reads the event afterwards, as a receiver that acknowledges
 * first and works later does; it keeps nothing of the bodies.
 */
const RECEIVER_THREAD = `
const { parentPort } = require("node:worker_threads");
const { performance } = require("node:perf_hooks");
const http = require("node:http");
const server = http.createServer((request, response) => {
  const chunks = [];
  request.on("data", (chunk) => chunks.push(chunk));
  request.on("end", () => {
    const epochMs = performance.timeOrigin + performance.now();
    response.writeHead(204).end();
    const event = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    parentPort.postMessage({
      id: event.id,
      epochMs,
      degraded: event.result !== undefined && event.result !== null && event.result.degraded === true,
      failed: event.type !== "compaction.completed",
    });
  });
});
server.listen(0, "127.0.0.1", () => parentPort.postMessage({ port: server.address().port }));
`;

export async function startCallbackClock(): Promise<CallbackClock> {
  const early = new Map<string, CallbackArrival>();
  const waiting = new Map<string, (arrival: CallbackArrival) => void>();
  const arrivals: (CallbackArrival & { id: string })[] = [];
  const thread = new Worker(RECEIVER_THREAD, { eval: true });
  const [{ port }] = (await once(thread, "message")) as [{ port: number }];
  thread.on("message", ({ id, epochMs, degraded, failed }: ThreadArrival) => {
    const arrival = { at: epochMs - performance.timeOrigin, degraded, failed };
    arrivals.push({ id, ...arrival });
    const resolve = waiting.get(id);
    if (resolve === undefined) early.set(id, arrival);
    else {
      waiting.delete(id);
      resolve(arrival);
    }
  });
  return {
    url: `http://127.0.0.1:${port}/compactd`,
    arrivals,
    arrival(id) {
      const known = early.get(id);
      if (known !== undefined) {
        early.delete(id);
        return Promise.resolve(known);
      }
      return new Promise((resolve) => waiting.set(id, resolve));
    },
    stop: async () => void (await thread.terminate()),
  };
}
