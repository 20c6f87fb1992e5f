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
  it("counts one per event, pings and comments included, and passes the bytes through unchanged", async () => {
    const wire =
      'event: message_start\ndata: {"type":"message_start"}\n\n' +
      'event: ping\ndata: {"type": "ping"}\n\n' +
      ": keep-alive comment\n\n" +
      'event: message_stop\ndata: {"type":"message_stop"}\n\n';
    expect(await count([wire])).toEqual({ events: 4, output: wire });
  });

  it("counts events whose delimiters are split across chunks, byte by byte", async () => {
    const wire = "event: a\r\ndata: 1\r\n\r\nevent: b\rdata: 2\r\rdata: é\n\n";
    expect((await count(Array.from(wire))).events).toBe(3);
  });

  it("does not count blank lines between events or an event that never ended", async () => {
    expect((await count(["\n\n\n", "data: 1\n\n", "\n\n", "data: unfinished\n"])).events).toBe(1);
  });
});
