import { once } from "node:events";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { CompactdClient, type CompactdClientOptions } from "../../src/client/index.js";

describe("CompactdClient options", () => {
  it("names the option at fault instead of failing on the first call", () => {
    expect(() => new CompactdClient({ baseUrl: "compactd:8080", apiKey: "k" })).toThrow(/^baseUrl: must be an http\(s\) URL/);
    expect(() => new CompactdClient({ baseUrl: "http://compactd:8080", apiKey: "" })).toThrow(/^apiKey:/);
  });

  it("refuses a baseUrl that does not parse, or carries a query, a fragment or credentials", () => {
    for (const baseUrl of ["http://", "http://compact d:8080", "http://compactd:8080/?tenant=a", "http://compactd:8080/#x", "http://u:p@compactd:8080"]) {
      expect(() => new CompactdClient({ baseUrl, apiKey: "k" }), baseUrl).toThrow(/^baseUrl: /);
    }
  });

  it("refuses an apiKey that cannot go in a header, rather than retrying a request that never leaves", () => {
    for (const apiKey of ["key\n", "key with spaces", " key", "ключ"]) {
      expect(() => new CompactdClient({ baseUrl: "http://compactd:8080", apiKey }), JSON.stringify(apiKey)).toThrow(/^apiKey: /);
    }
  });

  it("refuses retry and timeout options that would retry forever or that no timer takes", () => {
    const refused: [keyof CompactdClientOptions, unknown][] = [
      ["maxRetries", Number.NaN],
      ["maxRetries", Number.POSITIVE_INFINITY],
      ["maxRetries", -1],
      ["maxRetries", 1.5],
      ["maxRetries", "3"],
      ["maxRetryDelayMs", Number.NaN],
      ["maxRetryDelayMs", -1],
      ["maxRetryDelayMs", 2 ** 31],
      ["timeoutMs", 0],
      ["timeoutMs", 1.5],
      ["timeoutMs", Number.POSITIVE_INFINITY],
      ["timeoutMs", 2 ** 32],
    ];
    for (const [name, value] of refused) {
      const options = { baseUrl: "http://compactd:8080", apiKey: "k", [name]: value } as CompactdClientOptions;
      expect(() => new CompactdClient(options), `${name} ${String(value)}`).toThrow(new RegExp(`^${name}: `));
    }
  });

  it("refuses arguments the service could not take, naming each, before sending anything", async () => {
    let calls = 0;
    const client = new CompactdClient({
      baseUrl: "http://compactd:8080",
      apiKey: "k",
      fetch: async () => {
        calls++;
        // A finished job, so that a wait the client let through ends at once rather than polling.
        return new Response(JSON.stringify({ id: "cmp_1", status: "completed" }));
      },
    });
    const request = { messages: [{ role: "user" as const, content: "hi" }], contextWindow: 20_000 };
    const refusals: [string, () => Promise<unknown>][] = [
      ["wait", () => client.get("cmp_1", { wait: -1 })],
      ["wait", () => client.compact(request, { wait: Number.NaN })],
      // A wait in milliseconds (a typo for 120 s), or one that never ends, would hold the agent for hours or for good.
      ["wait", () => client.get("cmp_1", { wait: Number.POSITIVE_INFINITY })],
      ["wait", () => client.compact(request, { wait: 120_000 })],
      ["id", () => client.get(undefined as never)],
      ["id", () => client.get("")],
      ["id", () => client.cancel(42 as never)],
      ["id", () => client.getBatch(null as never)],
      ["request", () => client.compact(undefined as never)],
      ["messages", () => client.compact({ ...request, messages: "hi" } as never)],
      ["items", () => client.batch({ messages: [] } as never)],
      ["items[1].messages", () => client.batch([request, { contextWindow: 20_000 }] as never)],
      ["idempotencyKey", () => client.compact(request, { idempotencyKey: "turn\n7" })],
      ["idempotencyKey", () => client.batch([request], { idempotencyKey: "x".repeat(256) })],
      // The controller, not its signal: a common slip.
      ["signal", () => client.get("cmp_1", { signal: new AbortController() as never })],
    ];
    for (const [field, call] of refusals) {
      await expect(call(), field).rejects.toThrow(new RegExp(`^${field.replace(/[[\]]/g, "\\$&")}: `));
      await expect(call(), field).rejects.toBeInstanceOf(TypeError);
    }
    expect(calls).toBe(0);
  });

  it("refuses to send a message that refers to itself, or holds a BigInt, saying which and where", async () => {
    const client = new CompactdClient({ baseUrl: "http://compactd:8080", apiKey: "k", fetch: async () => Promise.reject(new Error("sent")) });
    const message: { role: string; content: unknown[] } = { role: "user", content: [] };
    message.content.push({ type: "text", text: "see above", parent: message });
    await expect(client.compact({ messages: [message] as never, contextWindow: 20_000 })).rejects.toThrow(
      /^messages\[0\]\.content\[0\]\.parent: refers to messages\[0\], which encloses it: a cycle, which JSON cannot carry/,
    );
    const counted = { role: "user", content: [{ type: "text", text: "x", tokens: 12n }] };
    await expect(client.compact({ messages: [counted] as never, contextWindow: 20_000 })).rejects.toThrow(
      new TypeError("messages[0].content[0].tokens: is a BigInt, which JSON cannot carry; send it as a number or a string"),
    );
  });

  it("sends the key as a Bearer token to the base URL without a doubled slash", async () => {
    const seen: { url: string; authorization: string | null }[] = [];
    const client = new CompactdClient({
      baseUrl: "http://compactd:8080/",
      apiKey: "key-1",
      fetch: async (input, init) => {
        seen.push({ url: String(input), authorization: new Headers(init?.headers).get("authorization") });
        return new Response(JSON.stringify({ id: "bat_1", status: "running", createdAt: "", counts: {}, items: [] }));
      },
    });
    await client.getBatch("bat_1");
    expect(seen).toEqual([{ url: "http://compactd:8080/v1/batches/bat_1", authorization: "Bearer key-1" }]);
  });

  it("sends over node:http by default, not Node's global fetch, the whole body arriving, one pool of connections for every client", async () => {
    const received: { headers: IncomingHttpHeaders; body: string }[] = [];
    const server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on("data", (chunk: Buffer) => chunks.push(chunk));
      request.on("end", () => {
        received.push({ headers: request.headers, body: Buffer.concat(chunks).toString("utf8") });
        response.writeHead(202, { "content-type": "application/json" }).end('{"id":"cmp_1","status":"queued"}');
      });
    });
    let connections = 0;
    server.on("connection", () => connections++);
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    try {
      const client = new CompactdClient({ baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, apiKey: "k" });
      const request = { messages: [{ role: "user" as const, content: "résumé — 要約 ✓ ".repeat(2_000) }], contextWindow: 200_000 };
      expect(await client.compact(request)).toEqual({ id: "cmp_1", status: "queued" });
      expect(JSON.parse(received[0]!.body)).toEqual(request);
      // compactd's fetch asks for an uncompressed answer; Node's sends "gzip, deflate" and a user-agent of "node".
      expect(received[0]!.headers["accept-encoding"]).toBe("identity");
      expect(received[0]!.headers["user-agent"]).not.toBe("node");
      // A second client shares the first one's kept-alive connection: one pool per process, not per client.
      const another = new CompactdClient({ baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, apiKey: "k" });
      await another.compact(request);
      expect(connections).toBe(1);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});
