/**
 * What answering one summarization request costs the fake model's server, in
 * CPU milliseconds of the bench process.
 *
 * Why it is measured: both sides of the overhead scenario reach the same fake
 * Anthropic API, which runs in the bench process, so its CPU is inside both
 * sides' figures. In production the model runs at the provider and costs
 * neither the agent nor the service; the same milliseconds added to both
 * sides bring their ratio closer to 1 than it is. Subtracting this cost
 * (times each side's summarization requests per job) gives the comparison
 * without the model.
 *
 * How: requests the scenario sent are replayed at the fake from a child
 * process, so the bench process does nothing else meanwhile and its CPU over
 * the replay, divided by the requests, is the fake's: reading the request,
 * parsing its JSON, writing the streamed reply. The client is plain
 * JavaScript on `node:http` over kept-alive connections, like the SDK's
 * transport, and drains every reply.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import type { BenchAnthropic } from "./benchAnthropic.js";

/** Requests replayed before the timed ones, for the fake's JIT. */
const WARM_UP_REQUESTS = 500;
/** Requests in flight during the replay, as many as a worker's jobs typically have at once in the overhead loops. */
const IN_FLIGHT = 16;

/**
 * The replaying client: reads the bodies (one JSON array) from stdin, sends
 * the warm-up requests, prints `timed`, sends the timed ones and prints `done`.
 */
const CLIENT = `
const http = require("node:http");
const [url, warmUp, timed, inFlight] = [new URL(process.argv[1]), ...process.argv.slice(2).map(Number)];
const agent = new http.Agent({ keepAlive: true });
let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => (input += chunk));
process.stdin.on("end", async () => {
  const bodies = JSON.parse(input);
  let sent = 0;
  const send = () => new Promise((resolve, reject) => {
    const body = bodies[sent++ % bodies.length];
    const request = http.request(
      { host: url.hostname, port: url.port, path: "/v1/messages", method: "POST", agent,
        headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) } },
      (response) => {
        response.on("data", () => {});
        response.on("end", () => (response.statusCode === 200 ? resolve() : reject(new Error("status " + response.statusCode))));
      },
    );
    request.on("error", reject);
    request.end(body);
  });
  const run = async (count) => {
    const last = sent + count;
    const lane = async () => { while (sent < last) await send(); };
    await Promise.all(Array.from({ length: inFlight }, lane));
  };
  await run(warmUp);
  process.stdout.write("timed\\n");
  await run(timed);
  process.stdout.write("done\\n");
  agent.destroy();
});
`;

/** CPU ms the bench process spends per summarization request the fake answers, over `requests` replayed ones. */
export async function modelServerMsPerRequest(fake: BenchAnthropic, requests: number): Promise<number> {
  const bodies = fake.keptBodies();
  if (bodies.length === 0) throw new Error("the fake model has answered no request to replay");
  const child = spawn(process.execPath, ["-e", CLIENT, fake.url, String(WARM_UP_REQUESTS), String(requests), String(IN_FLIGHT)], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  const exited = once(child, "exit");
  child.stdin!.end(JSON.stringify(bodies));
  let started: NodeJS.CpuUsage | undefined;
  let spent: NodeJS.CpuUsage | undefined;
  for await (const line of createInterface({ input: child.stdout! })) {
    if (line === "timed") started = process.cpuUsage();
    if (line === "done" && started !== undefined) spent = process.cpuUsage(started);
  }
  const [code] = (await exited) as [number | null];
  if (spent === undefined || code !== 0) throw new Error(`the replaying client exited with ${code} before it finished`);
  return (spent.user + spent.system) / 1000 / requests;
}
