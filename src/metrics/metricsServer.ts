import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { Registry } from "prom-client";
import { ErrorCodes } from "../client/errorCodes.js";
import { exposition } from "./exposition.js";

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
  const server = createServer((request, response) => {
    const path = new URL(request.url ?? "/", "http://metrics").pathname;
    const send = (status: number, contentType: string, body: string): void => {
      response.writeHead(status, { "content-type": contentType, "cache-control": "no-store" });
      response.end(request.method === "HEAD" ? undefined : body);
    };
    const answer = async (): Promise<void> => {
      if (request.method !== "GET" && request.method !== "HEAD") {
        send(405, "application/json", JSON.stringify({ error: { code: ErrorCodes.methodNotAllowed, message: "use GET" } }));
      } else if (path === "/metrics") {
        const scrape = await exposition(registry, request.headers.accept);
        send(200, scrape.contentType, scrape.body);
      } else if (Object.hasOwn(probes, path)) {
        const result = await probes[path]!();
        send(result.ok ? 200 : 503, "application/json", JSON.stringify({ status: result.ok ? "ok" : "unavailable", ...result.detail }));
      } else {
        send(404, "application/json", JSON.stringify({ error: { code: ErrorCodes.notFound, message: `no ${path} here` } }));
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
