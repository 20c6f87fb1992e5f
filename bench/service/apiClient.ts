/**
 * The agent's side of `POST /v1/compactions`: plain `node:http` over kept-alive
 * connections, so the load generator costs the shared cores as little as a
 * client can and every byte it sends is what an agent would send. Like
 * compactd's client, it sends a fresh Idempotency-Key with every submission,
 * so the API does what it does for that client: the request digest and the
 * look-up of an earlier use of the key.
 */
import { randomUUID } from "node:crypto";
import { Agent, request } from "node:http";
import { BENCH_API_KEY } from "./serviceProcesses.js";

export interface ApiClient {
  /** Submits one compaction (the body already serialized); resolves with the job id of the 202. */
  submit(body: string): Promise<string>;
  close(): void;
}

export function createApiClient(port: number): ApiClient {
  const agent = new Agent({ keepAlive: true, maxSockets: 512 });
  const submit = (body: string): Promise<string> =>
    new Promise((resolve, reject) => {
      const req = request(
        {
          host: "127.0.0.1",
          port,
          method: "POST",
          path: "/v1/compactions",
          agent,
          headers: {
            authorization: `Bearer ${BENCH_API_KEY}`,
            "content-type": "application/json",
            "content-length": Buffer.byteLength(body),
            "idempotency-key": randomUUID(),
          },
        },
        (res) => {
          let text = "";
          res.setEncoding("utf8");
          res.on("data", (chunk: string) => (text += chunk));
          res.on("end", () => {
            if (res.statusCode !== 202) return reject(new Error(`POST /v1/compactions answered ${res.statusCode}: ${text.slice(0, 300)}`));
            resolve((JSON.parse(text) as { id: string }).id);
          });
          res.on("error", reject);
        },
      );
      req.on("error", reject);
      req.end(body);
    });
  return { submit, close: () => agent.destroy() };
}
