/**
 * The API process: the app on `PORT`.
 *
 * `close()` stops accepting connections, lets requests in flight finish
 * (fastify answers 503 to new requests on kept-alive connections meanwhile),
 * and gives up on the stragglers at the shutdown deadline; `?wait=N` requests
 * are the long ones, and their clients simply ask again elsewhere.
 */
import type { FastifyInstance } from "fastify";
import type { Config } from "../config.js";
import { timerDelay } from "../core/timerDelay.js";
import { prepareTokenCounter } from "../core/tokenCounter.js";
import type { RunningProcess } from "../queue/runningProcess.js";
import { loggerOptions } from "../telemetry/logger.js";
import { buildApp, type ApiDeps } from "./buildApp.js";

export interface RunningApi extends RunningProcess {
  /** The bound port (useful with PORT=0). */
  readonly port: number;
  readonly app: FastifyInstance;
}

export async function runApi(config: Config, deps: ApiDeps = {}, host = "0.0.0.0"): Promise<RunningApi> {
  const app = await buildApp(config, { logger: loggerOptions("api", config.logLevel), ...deps });
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
        const deadline = setTimeout(() => app.server.closeAllConnections(), timerDelay(config.shutdownTimeoutMs));
        try {
          await app.close();
        } finally {
          clearTimeout(deadline);
        }
      })();
      return closing;
    },
  };
}
