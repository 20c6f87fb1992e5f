import { once } from "node:events";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { CompactdClient } from "../../src/client/index.js";

describe("CompactdClient options", () => {
  it("names the option at fault instead of failing on the first call", () => {
    expect(() => new CompactdClient({ baseUrl: "compactd:8080", apiKey: "k" })).toThrow(/^baseUrl: must be an http\(s\) URL/);
    expect(() => new CompactdClient({ baseUrl: "http://compactd:8080", apiKey: "" })).toThrow(/^apiKey:/);
  });

  it("refuses a negative or non-numeric wait before sending anything", async () => {
    let calls = 0;
    const client = new CompactdClient({
      baseUrl: "http://compactd:8080/",
      apiKey: "k",
      fetch: async () => {
        calls++;
        return new Response("{}");
      },
    });
    await expect(client.get("cmp_1", { wait: -1 })).rejects.toThrow(/^wait: must be a number of seconds/);
    await expect(client.compact({ messages: [], contextWindow: 1 }, { wait: Number.NaN })).rejects.toThrow(/^wait:/);
    expect(calls).toBe(0);
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
