/**
 * The fetch compactd sends with (the Anthropic summarizer's, and the
 * agent-side client's default), against a real local HTTP server: what the SDK relies on (status, headers, a body that streams as
 * it arrives, aborts before and after the headers, connection errors in the
 * shape Node's fetch gives them). That it lets go of a request body once
 * sent is held by requestBodyInFlight.test.ts.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { brotliCompressSync, deflateSync, gzipSync } from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import { createNodeHttpFetch, reportingServerSentEvents } from "../../src/http/nodeHttpFetch.js";

let server: Server | undefined;
afterEach(async () => {
  if (server === undefined) return;
  server.closeAllConnections();
  await new Promise((resolve) => server!.close(resolve));
  server = undefined;
});

interface Received {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingMessage["headers"];
  readonly body: string;
}

/** A server that records each request (body read whole) and answers with `answer`. */
async function serve(answer: (res: ServerResponse, received: Received) => void): Promise<{ url: string; received: Received[] }> {
  const received: Received[] = [];
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const request = { method: req.method ?? "", url: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks).toString("utf8") };
      received.push(request);
      answer(res, request);
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server!.address() as AddressInfo).port}`, received };
}

/** A server that answers an event stream's `first` part at once and the `rest` when told to `finish`. */
async function streamInTwo(first: string, rest: string): Promise<{ url: string; finish: () => void }> {
  let end: () => void = () => undefined;
  const { url } = await serve((res) => {
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.write(first);
    end = () => res.end(rest);
  });
  return { url, finish: () => end() };
}

function textOf(chunk: { readonly value?: Uint8Array | undefined }): string {
  return new TextDecoder().decode(chunk.value);
}

/** Everything the reader has left to give, as text. */
async function restOf(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<string> {
  let text = "";
  for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) text += textOf(chunk);
  return text;
}

describe("compactd's fetch over node:http", () => {
  it("sends the method, headers and body, and gives back the status, headers and body", async () => {
    const { url, received } = await serve((res) => {
      res.writeHead(201, "Made", { "content-type": "application/json", "x-request-id": "req_1" });
      res.end('{"ok":true}');
    });
    const fetch = createNodeHttpFetch();
    const body = '{"text":"héllo → world"}';
    const response = await fetch(`${url}/v1/messages?beta=true`, { method: "POST", headers: { "x-api-key": "sk-test", "content-type": "application/json" }, body });

    expect(response.status).toBe(201);
    expect(response.statusText).toBe("Made");
    expect(response.headers.get("x-request-id")).toBe("req_1");
    expect(await response.json()).toEqual({ ok: true });
    expect(received).toHaveLength(1);
    expect(received[0]).toMatchObject({ method: "POST", url: "/v1/messages?beta=true", body });
    expect(received[0]!.headers["x-api-key"]).toBe("sk-test");
    // Sent with its length in bytes, not chunked, and asking for no compression.
    expect(received[0]!.headers["content-length"]).toBe(String(Buffer.byteLength(body)));
    expect(received[0]!.headers["accept-encoding"]).toBe("identity");
  });

  it("streams the body as it arrives, before the response ends", async () => {
    const { url, finish } = await streamInTwo("event: ping\ndata: {}\n\n", "event: done\ndata: {}\n\n");
    const response = await createNodeHttpFetch()(url, { method: "POST", body: "{}" });
    const reader = response.body!.getReader();
    expect(textOf(await reader.read())).toBe("event: ping\ndata: {}\n\n");
    finish();
    expect(await restOf(reader)).toBe("event: done\ndata: {}\n\n");
  });

  it("reports each server-sent event of content of a successful body to the listener its init carries, as the bytes arrive, and passes them on unchanged", async () => {
    const { url, finish } = await streamInTwo("event: a\ndata: 0\n\nevent: ping\ndata: {}\n\n: comment\n\nevent: b\r\ndata: 1\r", "\n\r\n");
    let events = 0;
    const response = await createNodeHttpFetch()(url, { method: "POST", body: "{}", ...(reportingServerSentEvents(() => events++) as object) });
    const reader = response.body!.getReader();
    const first = textOf(await reader.read());
    // The first event, the ping and the comment have ended (keep-alives are not counted); the last event's blank line has not come yet.
    expect(events).toBe(1);
    finish();
    expect(first + (await restOf(reader))).toBe("event: a\ndata: 0\n\nevent: ping\ndata: {}\n\n: comment\n\nevent: b\r\ndata: 1\r\n\r\n");
    expect(events).toBe(2);
  });

  it("reports no events of an error's body", async () => {
    const { url } = await serve((res) => {
      res.writeHead(529, { "content-type": "text/event-stream" });
      res.end('event: error\ndata: {"type":"overloaded_error"}\n\n');
    });
    let events = 0;
    const response = await createNodeHttpFetch()(url, { method: "POST", body: "{}", ...(reportingServerSentEvents(() => events++) as object) });
    expect(await response.text()).toContain("overloaded_error");
    expect(events).toBe(0);
  });

  it("sends a byte stream body whole", async () => {
    const { url, received } = await serve((res) => res.end());
    const bytes = new TextEncoder().encode("streamed body");
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(bytes.subarray(0, 8));
        controller.enqueue(bytes.subarray(8));
        controller.close();
      },
    });
    await createNodeHttpFetch()(url, { method: "POST", body, duplex: "half" } as RequestInit);
    expect(received[0]!.body).toBe("streamed body");
  });

  it.each([
    ["gzip", gzipSync],
    ["br", brotliCompressSync],
    ["deflate", deflateSync],
  ] as const)("decodes a body an endpoint compressed (%s) though asked not to", async (encoding, compress) => {
    const events = "event: ping\ndata: {}\n\n".repeat(50);
    const { url } = await serve((res) => {
      res.writeHead(200, { "content-type": "text/event-stream", "content-encoding": encoding });
      res.end(compress(events));
    });
    const response = await createNodeHttpFetch()(url);
    expect(response.headers.get("content-encoding")).toBeNull();
    expect(await response.text()).toBe(events);
  });

  it("gives a bodiless status a null body", async () => {
    const { url } = await serve((res) => res.writeHead(204).end());
    const response = await createNodeHttpFetch()(url, { method: "DELETE" });
    expect(response.status).toBe(204);
    expect(response.body).toBeNull();
  });

  it("rejects with the abort reason when aborted before the headers, and at once when already aborted", async () => {
    const { url } = await serve(() => undefined); // never answers
    const controller = new AbortController();
    const pending = createNodeHttpFetch()(url, { method: "POST", body: "{}", signal: controller.signal });
    await new Promise((resolve) => setTimeout(resolve, 50));
    controller.abort();
    await expect(pending).rejects.toMatchObject({ name: "AbortError" });
    await expect(createNodeHttpFetch()(url, { signal: controller.signal })).rejects.toMatchObject({ name: "AbortError" });
  });

  it("errors a streaming body with the abort reason when aborted after the headers", async () => {
    const { url } = await serve((res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write("event: ping\ndata: {}\n\n");
    });
    const controller = new AbortController();
    const response = await createNodeHttpFetch()(url, { signal: controller.signal });
    const reader = response.body!.getReader();
    await reader.read();
    controller.abort();
    await expect(reader.read()).rejects.toMatchObject({ name: "AbortError" });
  });

  it("reports a refused connection as Node's fetch does: a TypeError with the cause", async () => {
    const { url } = await serve((res) => res.end());
    server!.closeAllConnections();
    await new Promise((resolve) => server!.close(resolve));
    server = undefined;
    const error = await createNodeHttpFetch()(url).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(TypeError);
    expect((error as TypeError).message).toBe("fetch failed");
    expect((error as TypeError & { cause: NodeJS.ErrnoException }).cause.code).toBe("ECONNREFUSED");
  });

  it("refuses a body it cannot send, naming what it takes", async () => {
    await expect(createNodeHttpFetch()("http://127.0.0.1:1/", { method: "POST", body: new URLSearchParams("a=1") })).rejects.toThrow(
      "fetch: the request body must be text, bytes or a byte stream",
    );
  });
});
