/**
 * The worker's metrics and probe port is open to whatever can reach the pod,
 * so odd requests to it must get an answer, never take the worker down: a
 * request target the URL parser refuses (`//[`), which Node's HTTP parser
 * lets through to the handler, once crashed the process. Runs the built
 * `compactd worker` (`npm test` builds dist/ first; run `npm run build`
 * before running this file alone).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeAnthropic, type FakeAnthropic } from "../helpers/fakeAnthropic.js";
import { freePort } from "../helpers/freePort.js";
import { rawExchange } from "../helpers/rawHttp.js";
import { deleteKeysUnder } from "../helpers/redisTestPrefix.js";
import { serviceConfig } from "../helpers/serviceConfig.js";
import { startWorkerProcess, type WorkerProcess } from "../helpers/workerProcess.js";

const config = serviceConfig("metrics-port-input");
let fake: FakeAnthropic;
let worker: WorkerProcess;
let port: number;

beforeAll(async () => {
  fake = await startFakeAnthropic();
  port = await freePort();
  worker = await startWorkerProcess(config, fake, { METRICS_PORT: String(port) });
});
afterAll(async () => {
  worker.child.kill("SIGTERM");
  await worker.exited;
  await fake.close();
  await deleteKeysUnder(config.queuePrefix);
});

describe("the worker's metrics port", () => {
  it("answers request targets the URL parser refuses with 400 and keeps serving", async () => {
    for (const target of ["//[", "http://[/", "http://host:99999/metrics"]) {
      const answer = await rawExchange(port, `GET ${target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
      expect(answer, target).toMatch(/^HTTP\/1\.1 400 /);
    }
    const still = await fetch(`http://127.0.0.1:${port}/healthz`);
    expect(still.status).toBe(200);
    expect(worker.child.exitCode).toBeNull();
  });
});
