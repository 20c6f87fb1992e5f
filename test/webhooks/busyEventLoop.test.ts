/**
 * A worker's event loop runs every compaction it holds, and at hundreds in
 * flight it runs late: an answer its callback receiver sends in time can sit
 * unread while the loop finishes other jobs' work (docs/OPERATIONS.md,
 * "Event-loop delay"). These tests block the loop while a real receiver, on
 * a thread of its own, answers, and check that the worker does not take its
 * own lateness for the receiver's: the answer that came in time counts as
 * delivered, and a receiver that answered at once stays one that gets first
 * deliveries. A receiver that does not answer still times out.
 */
import { once } from "node:events";
import { Worker } from "node:worker_threads";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { createMetrics } from "../../src/metrics/metrics.js";
import { createCallbackSender, type CallbackSender } from "../../src/webhooks/callbackSender.js";
import { FIRST_DELIVERY_TIMEOUT_MS, receiverOf } from "../../src/webhooks/receiverSlots.js";

const cleanups: (() => Promise<unknown> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** After the request arrives, the receiver thread waits this long and then answers 204; undefined: it never answers. */
interface ReceiverScript {
  readonly answerAfterMs?: number;
}

/** An HTTP receiver on a worker thread, so it answers while the test's own event loop is blocked. */
async function threadReceiver(script: ReceiverScript): Promise<{ url: string; arrived: () => Promise<void> }> {
  const source = `
    const { parentPort, workerData } = require("node:worker_threads");
    const http = require("node:http");
    const server = http.createServer((request, response) => {
      request.resume();
      request.on("end", () => {
        parentPort.postMessage("arrived");
        if (workerData.answerAfterMs !== undefined) setTimeout(() => response.writeHead(204).end(), workerData.answerAfterMs);
      });
    });
    server.listen(0, "127.0.0.1", () => parentPort.postMessage(server.address().port));
  `;
  const thread = new Worker(source, { eval: true, workerData: script });
  cleanups.push(() => thread.terminate());
  const [port] = (await once(thread, "message")) as [number];
  return { url: `http://127.0.0.1:${port}/hook`, arrived: async () => void (await once(thread, "message")) };
}

function sender(): CallbackSender {
  const config = { ...loadConfig({}), callbackAllow: ["127.0.0.1"] };
  const made = createCallbackSender({ config, metrics: createMetrics() });
  cleanups.push(() => made.destroy());
  return made;
}

/** Holds the event loop for `ms`, as a worker's CPU work on other compactions does. */
function keepBusy(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // spin
  }
}

/** Sends one callback in a first delivery's slot and blocks the loop for `busyMs` once the receiver has the request. */
async function deliverWhileBusy(callbacks: CallbackSender, url: string, arrived: () => Promise<void>, timeoutMs: number, busyMs: number) {
  const slot = await callbacks.slots.takeForFirstDelivery(receiverOf(url));
  expect(slot).toBeDefined();
  const target = { url, webhookId: "msg_busy", type: "compaction.completed" as const };
  const sent = callbacks.send(target, "whsec_dGVzdA==", 1, '{"type":"compaction.completed"}', slot!, timeoutMs);
  await arrived();
  keepBusy(busyMs);
  return sent;
}

describe("a callback sent while the worker's event loop is busy", () => {
  it("counts as delivered an answer that arrived within the deadline though the loop read it after", async () => {
    const receiver = await threadReceiver({ answerAfterMs: 50 });
    const result = await deliverWhileBusy(sender(), receiver.url, receiver.arrived, 400, 1_200);
    expect(result.outcome).toBe("delivered");
  });

  it("leaves a receiver that answered at once quick, so the next callback is delivered first too", async () => {
    const callbacks = sender();
    const receiver = await threadReceiver({ answerAfterMs: 50 });
    const result = await deliverWhileBusy(callbacks, receiver.url, receiver.arrived, FIRST_DELIVERY_TIMEOUT_MS, FIRST_DELIVERY_TIMEOUT_MS + 500);
    expect(result.outcome).toBe("delivered");
    expect(await callbacks.slots.takeForFirstDelivery(receiverOf(receiver.url))).toBeDefined();
  });

  it("still times out a receiver that does not answer, and gives it no more first deliveries", async () => {
    const callbacks = sender();
    const receiver = await threadReceiver({});
    const result = await deliverWhileBusy(callbacks, receiver.url, receiver.arrived, 400, 1_200);
    expect(result.outcome).toBe("timeout");
    expect(await callbacks.slots.takeForFirstDelivery(receiverOf(receiver.url))).toBeUndefined();
  });
});
