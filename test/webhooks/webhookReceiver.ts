/**
 * A real local HTTP receiver for callbacks: records every request and answers
 * as scripted (a status, or never). It can be stopped and started again on
 * the same port to play a receiver that is down for a while.
 */
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface ReceivedCallback {
  /** The request's path, e.g. `/hook`. */
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/** What to answer the n-th request (0-based): a status with headers, or "hang" to never answer. */
export type Responder = (index: number, request: ReceivedCallback) => { status: number; headers?: Record<string, string> } | "hang";

export interface WebhookReceiver {
  readonly received: ReceivedCallback[];
  readonly port: number;
  /** TCP connections accepted so far. */
  readonly connections: number;
  /** `http://127.0.0.1:<port><path>` */
  url(path?: string): string;
  /** Listens again on the same port after {@link stop}. */
  start(): Promise<void>;
  /** Closes the port and every open connection. */
  stop(): Promise<void>;
}

export async function startWebhookReceiver(respond: Responder = () => ({ status: 204 })): Promise<WebhookReceiver> {
  const received: ReceivedCallback[] = [];
  let server: Server | undefined;
  let port = 0;
  let connections = 0;

  const listen = async (): Promise<void> => {
    const next = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on("data", (chunk: Buffer) => chunks.push(chunk));
      request.on("end", () => {
        const callback = { path: request.url ?? "", headers: request.headers, body: Buffer.concat(chunks).toString("utf8") };
        const answer = respond(received.length, callback);
        received.push(callback);
        if (answer === "hang") return;
        response.writeHead(answer.status, answer.headers).end();
      });
    });
    next.on("connection", () => connections++);
    await new Promise<void>((resolve, reject) => {
      next.once("error", reject);
      next.listen(port, "127.0.0.1", () => resolve());
    });
    server = next;
    port = (next.address() as AddressInfo).port;
  };

  await listen();
  return {
    received,
    get port() {
      return port;
    },
    get connections() {
      return connections;
    },
    url: (path = "/hook") => `http://127.0.0.1:${port}${path}`,
    start: listen,
    async stop() {
      const current = server;
      server = undefined;
      if (current === undefined) return;
      await new Promise<void>((resolve) => {
        current.close(() => resolve());
        current.closeAllConnections();
      });
    },
  };
}
