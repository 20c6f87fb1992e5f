/**
 * What an agent's process spends to submit a compaction through compactd's
 * client (`npm run bench:client`, about a minute): `CompactdClient.compact`
 * of the service bench's ~100 KB corpus conversations, sent with each
 * transport the client can use, against a server in a child process that
 * answers as the API does for a queued job (so only the agent's side is
 * counted). Rounds alternate the transports; CPU is the bench process's
 * (every thread), divided by the requests of the round. It prints its
 * figures; docs/BENCHMARKS.md, "Agent-side client", keeps those of a run.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { cpus } from "node:os";
import { test } from "vitest";
import { CompactdClient } from "../src/client/compactdClient.js";
import type { CompactionRequest } from "../src/client/apiTypes.js";
import { corpusWorkloads, SCENARIO_CONVERSATIONS } from "./service/workload.js";
import { median } from "./timing.js";

const ROUNDS = 7;
const REQUESTS_PER_ROUND = 1_000;
const IN_FLIGHT = 16;

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
    const round = async (client: CompactdClient): Promise<number> => {
      const started = process.cpuUsage();
      let next = 0;
      const lane = async (): Promise<void> => {
        while (next < REQUESTS_PER_ROUND) await client.compact(requests[next++ % requests.length]!);
      };
      await Promise.all(Array.from({ length: IN_FLIGHT }, lane));
      const used = process.cpuUsage(started);
      return (used.user + used.system) / 1000 / REQUESTS_PER_ROUND;
    };
    const names = Object.keys(transports) as (keyof typeof transports)[];
    // A round of each to warm up, not kept.
    for (const name of names) await round(transports[name]);
    const perRound: Record<string, number[]> = Object.fromEntries(names.map((name) => [name, []]));
    for (let r = 0; r < ROUNDS; r++) for (const name of names) perRound[name]!.push(await round(transports[name]));
    const [ours, global] = names.map((name) => perRound[name]!) as [number[], number[]];
    const ratios = ours.map((ms, r) => ms / global[r]!);
    const lines = [
      `${cpus().length} CPUs (${cpus()[0]?.model ?? "unknown"}), Node ${process.version}; ${ROUNDS} rounds of ${REQUESTS_PER_ROUND} submissions, ${IN_FLIGHT} in flight`,
      ...names.map((name) => `${name}: median ${median(perRound[name]!).toFixed(3)} ms of CPU a submission (${perRound[name]!.map((ms) => ms.toFixed(2)).join(", ")})`),
      `node:http / global fetch, round by round: median ${median(ratios).toFixed(2)} (${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)})`,
    ];
    process.stdout.write(`${lines.join("\n")}\n`);
  } finally {
    server.kill();
  }
});
