import { describe, expect, it } from "vitest";
import { sseEventCounter } from "../../src/http/sseEventCounter.js";

/** Pipes the chunks through the counter; returns the event count and the bytes that came out. */
async function count(chunks: readonly string[]): Promise<{ events: number; output: string }> {
  let events = 0;
  const encoder = new TextEncoder();
  const source = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
      controller.close();
    },
  });
  const output = await new Response(source.pipeThrough(sseEventCounter(() => events++))).text();
  return { events, output };
}

describe("sseEventCounter", () => {
  it("counts one per event with data, not pings or comments, and passes the bytes through unchanged", async () => {
    const wire =
      'event: message_start\ndata: {"type":"message_start"}\n\n' +
      'event: ping\ndata: {"type": "ping"}\n\n' +
      ": keep-alive comment\n\n" +
      'event: message_stop\ndata: {"type":"message_stop"}\n\n';
    expect(await count([wire])).toEqual({ events: 2, output: wire });
  });

  it("tells a ping by its event name however it is written and split, and nothing else for one", async () => {
    const pings = "event:ping\ndata: {}\n\nevent: ping\r\ndata: {}\r\n\r\ndata: {}\nevent: ping\n\n";
    expect((await count(Array.from(pings))).events).toBe(0);
    const notPings = "event: pings\ndata: {}\n\nevent: ping \ndata: {}\n\nevent: ping\nevent: content_block_delta\ndata: {}\n\ndata\n\n";
    expect((await count(Array.from(notPings))).events).toBe(4);
  });

  it("does not count an event without data (an id or retry field alone)", async () => {
    expect((await count(["id: 7\n\nretry: 100\n\nevent: message_stop\n\n"])).events).toBe(0);
  });

  it("counts events whose delimiters are split across chunks, byte by byte", async () => {
    const wire = "event: a\r\ndata: 1\r\n\r\nevent: b\rdata: 2\r\rdata: é\n\n";
    expect((await count(Array.from(wire))).events).toBe(3);
  });

  it("does not count blank lines between events or an event that never ended", async () => {
    expect((await count(["\n\n\n", "data: 1\n\n", "\n\n", "data: unfinished\n"])).events).toBe(1);
  });
});
