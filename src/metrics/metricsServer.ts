import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { Registry } from "prom-client";
import { errorBody } from "../client/errorBody.js";
import { ErrorCodes } from "../client/errorCodes.js";
import { exposition } from "./exposition.js";
import { parseUrl } from "../http/parseUrl.js";

/**
 * The worker's small HTTP side door: `/metrics` for Prometheus and whatever
 * probes the worker defines (`/healthz`, `/readyz`). Plain `node:http`
 * because a worker has no other HTTP to serve and must answer even while its
 * event loop is busy with jobs; no auth, like the API's health and metrics.
 */

export interface ProbeResult {
  readonly ok: boolean;
  /** Merged into the JSON body, e.g. `{ consuming: false }`. */
  readonly detail?: Record<string, unknown>;
}

export type Probe = () => ProbeResult | Promise<ProbeResult>;

export interface MetricsServerOptions {
  readonly registry: Registry;
  readonly port: number;
  /** Default all interfaces: Prometheus and the kubelet scrape from outside the pod. */
  readonly host?: string;
  /** Path → probe; answered 200 `{status:"ok"}` or 503 `{status:"unavailable"}`. */
  readonly probes?: Readonly<Record<string, Probe>>;
}

export interface MetricsServer {
  /** The bound port (useful with port 0). */
  readonly port: number;
  close(): Promise<void>;
}

export async function startMetricsServer({ registry, port, host, probes = {} }: MetricsServerOptions): Promise<MetricsServer> {
  const served = ["/metrics", ...Object.keys(probes)].join(", ");
  const server = createServer((request, response) => {
    const send = (status: number, contentType: string, body: string, headers: Record<string, string> = {}): void => {
      response.writeHead(status, { "content-type": contentType, "cache-control": "no-store", ...headers });
      response.end(request.method === "HEAD" ? undefined : body);
    };
    const refuse = (status: number, code: string, message: string, headers?: Record<string, string>): void =>
      send(status, "application/json", JSON.stringify(errorBody(code, message)), headers);
    // Node's parser passes targets such as `//[` that URL refuses; thrown
    // here, outside any promise, that would end the whole process.
    const target = request.url ?? "/";
    const url = parseUrl(target, "http://metrics");
    if (url === undefined) return refuse(400, ErrorCodes.invalidUrl, "the request target is not a valid URL");
    const path = url.pathname;
    const answer = async (): Promise<void> => {
      if (request.method !== "GET" && request.method !== "HEAD") {
        refuse(405, ErrorCodes.methodNotAllowed, "use GET", { allow: "GET, HEAD" });
      } else if (path === "/metrics") {
        const scrape = await exposition(registry, request.headers.accept);
        send(200, scrape.contentType, scrape.body);
      } else if (Object.hasOwn(probes, path)) {
        const result = await probes[path]!();
        send(result.ok ? 200 : 503, "application/json", JSON.stringify({ status: result.ok ? "ok" : "unavailable", ...result.detail }));
      } else {
        // The path is not echoed: it can be kilobytes of whatever the caller sent.
        refuse(404, ErrorCodes.notFound, `nothing at this path; this port serves ${served}`);
      }
    };
    answer().catch((error: unknown) => {
      // A probe that throws is a failed probe, not a crashed worker.
      if (!response.headersSent) {
        send(503, "application/json", JSON.stringify({ status: "unavailable", error: String(error) }));
      } else response.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        // Prometheus keeps connections alive; do not wait for it to hang up.
        server.closeAllConnections();
      }),
  };
}
