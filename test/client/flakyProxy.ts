/**
 * A real local HTTP proxy in front of the API that misbehaves on cue: it
 * answers a request itself with a status (a 503 with `Retry-After`, as a load
 * balancer or a draining API would), or drops the connection before or after
 * passing the request on. What the client does about it is then visible
 * both in the proxy's log and in the service's state.
 */
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";

export type Fault =
  | { readonly kind: "status"; readonly status: number; readonly retryAfter?: string }
  /** Close the connection without an answer; the API never sees the request. */
  | { readonly kind: "dropBeforeForwarding" }
  /** Pass the request on, then close the connection instead of relaying the API's answer. */
  | { readonly kind: "dropAfterForwarding" };

export interface ProxiedRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  /** When the request arrived (ms since the epoch). */
  readonly at: number;
  readonly fault: Fault | undefined;
  /** The API's answer, when the request was passed on. */
  upstream?: { readonly status: number; readonly body: string };
}

export interface FlakyProxy {
  readonly url: string;
  readonly requests: readonly ProxiedRequest[];
  close(): Promise<void>;
}

/** `faultFor` picks the fault for each request (numbered from 0), or undefined to pass it through. */
export async function startFlakyProxy(
  target: string,
  faultFor: (request: { method: string; url: string }, index: number) => Fault | undefined,
): Promise<FlakyProxy> {
  const requests: ProxiedRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const method = req.method ?? "GET";
      const url = req.url ?? "/";
      const fault = faultFor({ method, url }, requests.length);
      const recorded: ProxiedRequest = { method, url, headers: req.headers, at: Date.now(), fault };
      requests.push(recorded);
      if (fault?.kind === "status") {
        const body = JSON.stringify({ error: { code: "unavailable", message: "the proxy says: not now" } });
        res.writeHead(fault.status, { "content-type": "application/json", ...(fault.retryAfter !== undefined && { "retry-after": fault.retryAfter }) });
        res.end(body);
        return;
      }
      if (fault?.kind === "dropBeforeForwarding") {
        req.socket.destroy();
        return;
      }
      void forward(target, method, url, req.headers, Buffer.concat(chunks)).then(
        (upstream) => {
          recorded.upstream = { status: upstream.status, body: upstream.body };
          if (fault?.kind === "dropAfterForwarding") {
            req.socket.destroy();
            return;
          }
          res.writeHead(upstream.status, upstream.headers).end(upstream.body);
        },
        () => req.socket.destroy(),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}

const PASSED_HEADERS = ["authorization", "content-type", "accept", "idempotency-key"];
const RELAYED_HEADERS = ["content-type", "location", "retry-after", "idempotent-replayed"];

async function forward(target: string, method: string, url: string, headers: IncomingHttpHeaders, body: Buffer) {
  const passed: Record<string, string> = {};
  for (const name of PASSED_HEADERS) {
    const value = headers[name];
    if (typeof value === "string") passed[name] = value;
  }
  const response = await fetch(`${target}${url}`, { method, headers: passed, ...(body.length > 0 && { body }) });
  const relayed: Record<string, string> = {};
  for (const name of RELAYED_HEADERS) {
    const value = response.headers.get(name);
    if (value !== null) relayed[name] = value;
  }
  return { status: response.status, headers: relayed, body: await response.text() };
}
