/**
 * What the Anthropic summarizer holds while a summary streams in: the
 * prompt it was handed, not also the request's JSON, as text or as bytes.
 * Node's fetch kept a text body as its source until the response ended,
 * which for a summary is the whole call, and a request it clones (one that
 * may follow a redirect) keeps every byte of a stream body in the clone's
 * unread tee branch; a worker with hundreds of calls in flight would hold
 * every prompt twice. The summarizer now sends over node:http
 * (nodeHttpFetch.ts), which must let go of the body once written. Measured on the heap and the ArrayBuffers after forced collections,
 * with many calls whose responses have begun and not ended, against a server
 * that reads each body and keeps nothing of it. The calls must still end when
 * aborted after those collections: sent without a clone, fetch's own hold on
 * the abort does not outlive them (see reportEachEvent in anthropic.ts).
 */
import Anthropic from "@anthropic-ai/sdk";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import type { SummarizationRequest } from "../../src/core/summarizer.js";
import { createAnthropicSummarizer } from "../../src/summarizers/anthropic.js";
import { fillerText } from "../helpers/conversations.js";
import { liveHeapBytes } from "../helpers/liveHeap.js";

const IN_FLIGHT = 20;

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  server = undefined;
});

/**
 * Reads each request's body to the end and records its size (-1 when it was
 * not sent with its length, as a text body is), then starts an event stream
 * it never ends.
 */
async function startStreamingServer(): Promise<{ url: string; received: number[] }> {
  const received: number[] = [];
  server = createServer((req, res) => {
    let bytes = 0;
    req.on("data", (chunk: Buffer) => (bytes += chunk.length));
    req.on("end", () => {
      received.push(req.headers["content-length"] === String(bytes) ? bytes : -1);
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write("event: ping\ndata: {\"type\": \"ping\"}\n\n");
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server!.address() as AddressInfo).port}`, received };
}

/** The summarizer's own client (node:http), and a client handed to it, which sends with Node's fetch. */
const CLIENTS = {
  "its own client": (url: string) => createAnthropicSummarizer({ apiKey: "sk-test", baseURL: url, model: "claude-test", maxRetries: 0 }),
  "a given client": (url: string) =>
    createAnthropicSummarizer({ client: new Anthropic({ apiKey: "sk-test", baseURL: url }), model: "claude-test", maxRetries: 0 }),
};

describe.each(Object.entries(CLIENTS))("an Anthropic summarizer call whose response is streaming, through %s", (_name, create) => {
  it("holds the prompt it was handed but not the request's JSON text", async () => {
    const { url, received } = await startStreamingServer();
    const summarizer = create(url);
    // Not all Latin-1, as most agent transcripts: two bytes a character in the heap.
    const prompt = `${fillerText(200_000)} → done`;
    const call = (signal: AbortSignal): Promise<unknown> =>
      summarizer
        .summarize({
          kind: "history",
          system: "You summarize agent sessions.",
          prompt,
          maxTokens: 1_000,
          previousSummary: undefined,
          omitted: 0,
          signal,
          onProgress: () => undefined,
          onWaiting: () => undefined,
        } satisfies SummarizationRequest)
        .catch(() => undefined);
    const allReceived = async (count: number): Promise<void> => {
      while (received.length < count) await new Promise((resolve) => setTimeout(resolve, 10));
    };
    // One call first, so that the SDK's lazily loaded code is not counted.
    const warmUp = new AbortController();
    const first = call(warmUp.signal);
    await allReceived(1);
    warmUp.abort();
    await first;

    const aborts = Array.from({ length: IN_FLIGHT }, () => new AbortController());
    const before = liveHeapBytes();
    const calls = aborts.map((abort) => call(abort.signal));
    await allReceived(1 + IN_FLIGHT);
    const perCall = (liveHeapBytes() - before) / IN_FLIGHT;
    for (const abort of aborts) abort.abort();
    await Promise.all(calls);

    expect(received.every((bytes) => bytes > prompt.length)).toBe(true);
    // The JSON text is two bytes a character, 2 × prompt.length bytes a
    // call, its UTF-8 about 1 ×. Measured: 0.45 × prompt.length a call over
    // node:http (the SDK's objects and the connection's), 0.6 × through Node's
    // fetch with the body as a stream; 1.6 × while the bytes sat in the
    // cloned request's tee branch, 2.5 × (the heap alone) while the text was
    // the body.
    expect(perCall).toBeLessThan(prompt.length);
  }, 60_000);
});
