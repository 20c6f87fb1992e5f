/**
 * A worker process SIGKILLed while it makes a callback's first delivery: the
 * job is still its own then, so another worker takes it over and the
 * callback is delivered from the queue. Runs the built `compactd worker`
 * (`npm test` builds dist/ first; run `npm run build` before running this
 * file alone).
 */
import type { ChildProcess } from "node:child_process";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FastifyInstance } from "fastify";
import { buildApp } from "../../src/api/buildApp.js";
import type { Config } from "../../src/config.js";
import { startWebhookReceiver, type WebhookReceiver } from "../webhooks/webhookReceiver.js";
import { startFakeAnthropic, type FakeAnthropic } from "../helpers/fakeAnthropic.js";
import { markedRequest } from "../helpers/markedConversation.js";
import { deleteKeysUnder } from "../helpers/redisTestPrefix.js";
import { bearer, serviceConfig, TEST_WEBHOOK_SECRET } from "../helpers/serviceConfig.js";
import { startWorkerProcess } from "../helpers/workerProcess.js";
import { waitUntil } from "../helpers/waitUntil.js";

let config: Config;
let fake: FakeAnthropic;
let receiver: WebhookReceiver;
let app: FastifyInstance;
const children: ChildProcess[] = [];

beforeAll(async () => {
  fake = await startFakeAnthropic({ script: () => ({ kind: "reply" }) });
  // The first request is never answered: the worker is killed while it waits.
  receiver = await startWebhookReceiver((index) => (index === 0 ? "hang" : { status: 204 }));
  config = serviceConfig("first-delivery-crash", { COMPACTD_CALLBACK_ALLOW: "127.0.0.1" });
  app = await buildApp(config);
});

afterAll(async () => {
  for (const child of children) if (child.exitCode === null) child.kill("SIGKILL");
  await app.close();
  await fake.close();
  await receiver.stop();
  await deleteKeysUnder(config.queuePrefix);
});

describe("a worker killed during a callback's first delivery", () => {
  it("loses no callback: the job is taken over and its callback delivered from the queue, the same bytes under the same webhook-id", async () => {
    const doomed = await startWorkerProcess(config, fake);
    children.push(doomed.child);
    const response = await app.inject({
      method: "POST",
      url: "/v1/compactions",
      headers: bearer("acme"),
      payload: markedRequest("first-delivery-crash", { callbackUrl: receiver.url("/hook") }),
    });
    expect(response.statusCode).toBe(202);
    const { id } = response.json() as { id: string };

    // The first delivery is out (and cut off only after a second): kill the worker now.
    await waitUntil(() => receiver.received.length === 1, "the first delivery reaches the receiver");
    doomed.child.kill("SIGKILL");
    await doomed.exited;
    const summarizerRequests = fake.requests.length;

    const survivor = await startWorkerProcess(config, fake);
    children.push(survivor.child);
    await waitUntil(() => receiver.received.length >= 2, "the callback arrives again, from the worker that took the job over", 30_000);
    const [first, second] = receiver.received;
    expect(second!.headers["webhook-id"]).toBe(first!.headers["webhook-id"]);
    expect(second!.body).toBe(first!.body);
    const event = new Webhook(TEST_WEBHOOK_SECRET).verify(second!.body, second!.headers as Record<string, string>) as { type: string; id: string };
    expect(event).toMatchObject({ type: "compaction.completed", id });

    // Summarized once: the worker that took over found the stored outcome and only settled it.
    const view = (await app.inject({ method: "GET", url: `/v1/compactions/${id}?wait=30`, headers: bearer("acme") })).json();
    expect(view.status).toBe("completed");
    expect(view.attempts).toBe(2);
    expect(fake.requests.length).toBe(summarizerRequests);

    survivor.child.kill("SIGTERM");
    expect(await survivor.exited).toBe(0);
  }, 60_000);
});
