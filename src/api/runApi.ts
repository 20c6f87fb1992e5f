/**
 * The API process: the app on `PORT`.
 *
 * `close()` stops accepting connections, lets requests in flight finish
 * (fastify answers 503 to new requests on kept-alive connections meanwhile),
 * and gives up on the stragglers at the shutdown deadline; `?wait=N` requests
 * are the long ones, and their clients simply ask again elsewhere.
 */
import { once } from "node:events";
import type { FastifyInstance } from "fastify";
import type { Config } from "../config.js";
import { prepareTokenCounter } from "../core/tokenCounter.js";
import type { RunningProcess } from "../queue/runningProcess.js";
import { shutdownDeadline } from "../queue/shutdownDeadline.js";
import { loggerOptions } from "../telemetry/logger.js";
import { buildApp, type ApiDeps } from "./buildApp.js";

export interface RunningApi extends RunningProcess {
  /** The bound port (useful with PORT=0). */
  readonly port: number;
  readonly app: FastifyInstance;
}

export async function runApi(config: Config, deps: ApiDeps = {}, host = "0.0.0.0"): Promise<RunningApi> {
  const shutdown = deps.shutdown ?? shutdownDeadline(config.shutdownTimeoutMs);
  const app = await buildApp(config, { logger: loggerOptions("api", config.logLevel), ...deps, shutdown });
  // Before listening, so that no request waits for the tokenizer's table (intake threads load their own: OPERATIONS.md, "Intake threads").
  app.log.info(prepareTokenCounter(), "token counter ready");
  await app.listen({ port: config.port, host });
  const address = app.server.address();
  const port = typeof address === "object" && address !== null ? address.port : config.port;
  let closing: Promise<void> | undefined;
  return {
    port,
    app,
    close() {
      closing ??= (async () => {
        shutdown.begin();
        // Fastify ends the server, then its services (onClose), each step bounded by the same deadline.
        const serverClosed = once(app.server, "close");
        const appClosed = app.close();
        await shutdown.step("HTTP requests in flight", serverClosed, () => app.server.closeAllConnections());
        await appClosed;
      })();
      return closing;
    },
  };
}
