/**
 * A destination for a pino logger (the worker's, or fastify's through its
 * `stream` option) that keeps every line it is given, parsed, in order: what
 * an operator's log collector would see.
 */
import { Writable } from "node:stream";

export interface LogLines {
  readonly stream: Writable;
  /** Every line written so far, as JSON objects. */
  readonly lines: Record<string, unknown>[];
}

export function logLines(): LogLines {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split("\n")) if (line !== "") lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { stream, lines };
}
