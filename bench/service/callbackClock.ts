/**
 * Where the service's callbacks land in the bench, and when: the end of every
 * job's enqueue-to-callback latency. Built on the tests' webhook receiver
 * (a real `node:http` server on 127.0.0.1).
 */
import { performance } from "node:perf_hooks";
import { startWebhookReceiver } from "../../test/webhooks/webhookReceiver.js";

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

export async function startCallbackClock(): Promise<CallbackClock> {
  const early = new Map<string, CallbackArrival>();
  const waiting = new Map<string, (arrival: CallbackArrival) => void>();
  const arrivals: (CallbackArrival & { id: string })[] = [];
  const receiver = await startWebhookReceiver((_index, callback) => {
    // The receiver keeps every body it got; thousands of results would only
    // grow the bench's heap (and its collections) under the measurement.
    receiver.received.length = 0;
    const at = performance.now();
    const event = JSON.parse(callback.body) as { type: string; id: string; result?: { degraded?: boolean } };
    const arrival = { at, degraded: event.result?.degraded === true, failed: event.type !== "compaction.completed" };
    arrivals.push({ id: event.id, ...arrival });
    const resolve = waiting.get(event.id);
    if (resolve === undefined) early.set(event.id, arrival);
    else {
      waiting.delete(event.id);
      resolve(arrival);
    }
    return { status: 204 };
  });
  return {
    url: receiver.url("/compactd"),
    arrivals,
    arrival(id) {
      const known = early.get(id);
      if (known !== undefined) {
        early.delete(id);
        return Promise.resolve(known);
      }
      return new Promise((resolve) => waiting.set(id, resolve));
    },
    stop: () => receiver.stop(),
  };
}
