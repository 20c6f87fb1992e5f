/**
 * A minimal receiver of compactd's webhooks.
 *
 * It believes nothing before the signature checks out (verifyWebhook needs
 * the raw body, so it reads the bytes before any JSON parsing), answers 2xx
 * only once the event has been handled (an error makes the service deliver
 * it again), and handles each webhook once: delivery is at least once, and a
 * repeated delivery carries the same `webhook-id`.
 *
 *   COMPACTD_WEBHOOK_SECRET=whsec_… PORT=3000 node dist/examples/webhookReceiver.js
 *
 * (In your project, import from "compactd/client".)
 */
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { verifyWebhook, WebhookVerificationError, type WebhookEvent } from "../src/client/index.js";
import { exitUnlessSet } from "./exampleEnv.js";

export interface WebhookReceiverOptions {
  /** The service's COMPACTD_WEBHOOK_SECRET (`whsec_…`). */
  readonly secret: string;
  readonly onEvent: (event: WebhookEvent) => void | Promise<void>;
  /** Default 0: any free port. */
  readonly port?: number;
  /** Default 127.0.0.1. */
  readonly host?: string;
}

export interface WebhookReceiver {
  /** The `callbackUrl` to hand the service. */
  readonly url: string;
  close(): Promise<void>;
}

export async function startWebhookReceiver(options: WebhookReceiverOptions): Promise<WebhookReceiver> {
  // A real receiver keeps these where they survive a restart (and expires them after a day).
  const handled = new Set<string>();
  const server = createServer((request, response) => {
    void (async () => {
      const body = await rawBody(request);
      let event: WebhookEvent;
      try {
        event = verifyWebhook(body, request.headers, options.secret);
      } catch (err) {
        if (!(err instanceof WebhookVerificationError)) throw err;
        response.writeHead(401, { "content-type": "text/plain" }).end(err.message);
        return;
      }
      const webhookId = String(request.headers["webhook-id"]);
      if (!handled.has(webhookId)) {
        await options.onEvent(event);
        handled.add(webhookId);
      }
      response.writeHead(204).end();
    })().catch(() => response.writeHead(500).end());
  });
  const host = options.host ?? "127.0.0.1";
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, host, resolve));
  return {
    url: `http://${host}:${(server.address() as AddressInfo).port}/compactd`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function rawBody(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  exitUnlessSet("webhookReceiver", { COMPACTD_WEBHOOK_SECRET: "the secret compactd signs with; `compactd dev` prints it" });
  const receiver = await startWebhookReceiver({
    secret: process.env.COMPACTD_WEBHOOK_SECRET ?? "",
    port: Number(process.env.PORT ?? 3000),
    onEvent: (event) => console.log(JSON.stringify({ type: event.type, id: event.id, conversationId: event.conversationId })),
  });
  console.log(`listening on ${receiver.url}`);
}
