/**
 * What an agent's process spends on compactd's client (`npm run bench:client`,
 * about a minute), in two measures:
 * - submitting: `CompactdClient.compact` of the service bench's ~100 KB
 *   corpus conversations, sent with each transport the client can use,
 *   against a server in a child process that answers as the API does for a
 *   queued job (so only the agent's side is counted);
 * - receiving: `verifyWebhook` of signed `compaction.completed` bodies
 *   against the `standardwebhooks` package's own `verify`, which it matches.
 * Rounds alternate the two sides of each measure; CPU is the bench process's
 * (every thread), divided by the calls of the round. It prints its figures;
 * docs/BENCHMARKS.md, "Agent-side client", keeps those of a run.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { cpus } from "node:os";
import { test } from "vitest";
import { Webhook } from "standardwebhooks";
import { CompactdClient } from "../src/client/compactdClient.js";
import { verifyWebhook } from "../src/client/verifyWebhook.js";
import { signWebhook } from "../src/webhooks/signing.js";
import type { CompactionRequest } from "../src/client/apiTypes.js";
import { corpusWorkloads, SCENARIO_CONVERSATIONS } from "./service/workload.js";
import { median } from "./timing.js";

const ROUNDS = 7;
const REQUESTS_PER_ROUND = 1_000;
const IN_FLIGHT = 16;
const VERIFICATIONS_PER_ROUND = 400;
const SECRET = `whsec_${Buffer.from("compactd-bench-secret-0123456789").toString("base64")}`;

/** Answers every request as the API answers a queued compaction, after reading the whole body. */
const SERVER = `
const http = require("node:http");
const server = http.createServer((request, response) => {
  request.resume();
  request.on("end", () => {
    response.writeHead(202, { "content-type": "application/json", location: "/v1/compactions/cmp_bench" });
    response.end('{"id":"cmp_bench","status":"queued"}');
  });
});
server.keepAliveTimeout = 60000;
server.listen(0, "127.0.0.1", () => console.log(server.address().port));
`;

/** CPU ms a call of the bench process (every thread) over `calls` calls made by `work`. */
async function cpuMsPerCall(calls: number, work: () => unknown): Promise<number> {
  const started = process.cpuUsage();
  await work();
  const used = process.cpuUsage(started);
  return (used.user + used.system) / 1000 / calls;
}

/**
 * Runs `round` on each of two `sides` in turn, once each to warm up and then
 * {@link ROUNDS} times, and the lines that report them: each side's median
 * and rounds, and the first over the second round by round.
 */
async function alternatingRounds<T>(sides: Readonly<Record<string, T>>, round: (side: T) => Promise<number>, perWhat: string): Promise<string[]> {
  const names = Object.keys(sides);
  for (const name of names) await round(sides[name]!);
  const perRound = names.map(() => [] as number[]);
  for (let r = 0; r < ROUNDS; r++) for (const [k, name] of names.entries()) perRound[k]!.push(await round(sides[name]!));
  const [first, second] = perRound as [number[], number[]];
  const ratios = first.map((ms, r) => ms / second[r]!);
  return [
    ...names.map((name, k) => `${name}: median ${median(perRound[k]!).toFixed(3)} ms of CPU ${perWhat} (${perRound[k]!.map((ms) => ms.toFixed(2)).join(", ")})`),
    `${names[0]} / ${names[1]}, round by round: median ${median(ratios).toFixed(2)} (${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)})`,
  ];
}

test("the agent's CPU per submission, by transport", async () => {
  const server = spawn(process.execPath, ["-e", SERVER], { stdio: ["ignore", "pipe", "inherit"] });
  try {
    const [portLine] = (await once(server.stdout!, "data")) as [Buffer];
    const baseUrl = `http://127.0.0.1:${String(portLine).trim()}`;
    const requests = corpusWorkloads(SCENARIO_CONVERSATIONS).map((w) => w.request as unknown as CompactionRequest);
    const transports = {
      "node:http (the default)": new CompactdClient({ baseUrl, apiKey: "bench" }),
      "Node's global fetch": new CompactdClient({ baseUrl, apiKey: "bench", fetch: globalThis.fetch }),
    };
    const submitAll = async (client: CompactdClient): Promise<void> => {
      let next = 0;
      const lane = async (): Promise<void> => {
        while (next < REQUESTS_PER_ROUND) await client.compact(requests[next++ % requests.length]!);
      };
      await Promise.all(Array.from({ length: IN_FLIGHT }, lane));
    };
    const lines = [
      `${cpus().length} CPUs (${cpus()[0]?.model ?? "unknown"}), Node ${process.version}; ${ROUNDS} rounds of ${REQUESTS_PER_ROUND} submissions, ${IN_FLIGHT} in flight`,
      ...(await alternatingRounds(transports, (client) => cpuMsPerCall(REQUESTS_PER_ROUND, () => submitAll(client)), "a submission")),
    ];
    process.stdout.write(`${lines.join("\n")}\n`);
  } finally {
    server.kill();
  }
});

test("the receiver's CPU to verify and read a callback", async () => {
  // A compaction.completed body around each conversation's messages: the size of a result that kept all of them.
  const bodies = corpusWorkloads(SCENARIO_CONVERSATIONS).map((w) =>
    JSON.stringify({ type: "compaction.completed", id: "cmp_bench", conversationId: null, result: { messages: w.request.messages }, metadata: null }),
  );
  const signed = bodies.map((body) => signWebhook(SECRET, "msg_bench", body));
  const verifiers = {
    "verifyWebhook (Node's HMAC)": (body: string, headers: Record<string, string>) => verifyWebhook(body, headers, SECRET),
    "standardwebhooks' verify": (body: string, headers: Record<string, string>) => new Webhook(SECRET).verify(body, headers),
  };
  const verifyAll = (verify: (body: string, headers: Record<string, string>) => unknown): void => {
    for (let i = 0; i < VERIFICATIONS_PER_ROUND; i++) verify(bodies[i % bodies.length]!, { ...signed[i % bodies.length]! });
  };
  const meanKb = bodies.reduce((sum, body) => sum + Buffer.byteLength(body), 0) / bodies.length / 1000;
  const lines = [
    `${ROUNDS} rounds of ${VERIFICATIONS_PER_ROUND} verifications of bodies of ${meanKb.toFixed(0)} KB on average`,
    ...(await alternatingRounds(verifiers, (verify) => cpuMsPerCall(VERIFICATIONS_PER_ROUND, () => verifyAll(verify)), "a callback")),
  ];
  process.stdout.write(`${lines.join("\n")}\n`);
});
