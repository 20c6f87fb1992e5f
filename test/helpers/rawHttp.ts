/**
 * HTTP requests exactly as a test writes them, over a real connection: the
 * method, headers and body bytes go out unchanged (a DELETE with a body, a
 * charset fetch would not send), and `Content-Length` is set for a body
 * unless the headers give one.
 */
import { request, type Agent, type IncomingHttpHeaders } from "node:http";
import { connect } from "node:net";

export interface RawResponse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

export interface RawRequest {
  readonly method: string;
  readonly path: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string | Buffer;
  /** A keep-alive agent, to send requests one after another on one connection; a connection of its own otherwise. */
  readonly agent?: Agent;
}

export function rawRequest(port: number, { method, path, headers = {}, body, agent }: RawRequest): Promise<RawResponse> {
  const length = body === undefined ? {} : { "content-length": String(Buffer.byteLength(body)) };
  return new Promise((resolve, reject) => {
    const sent = request({ host: "127.0.0.1", port, method, path, headers: { ...length, ...headers }, agent: agent ?? false }, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () => resolve({ status: response.statusCode!, headers: response.headers, body: Buffer.concat(chunks).toString("utf8") }));
      response.on("error", reject);
    });
    sent.on("error", reject);
    sent.end(body);
  });
}

/**
 * Writes `bytes` to a fresh connection and resolves with everything the
 * server sends back before it closes. With `stall`, the connection is left
 * open after them, as a client that stalls mid-request leaves it (ending it
 * instead makes the parser refuse the request as cut short, not as late).
 */
export function rawExchange(port: number, bytes: string | Buffer, { stall = false } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    const chunks: Buffer[] = [];
    socket.on("data", (chunk) => chunks.push(chunk));
    socket.on("close", () => resolve(Buffer.concat(chunks).toString("latin1")));
    socket.on("error", reject);
    if (stall) socket.write(bytes);
    else socket.end(bytes);
  });
}
