/**
 * The live heap: bytes in use after forced full collections, for tests that
 * hold what something keeps to a bound. ArrayBuffers' contents (Buffers,
 * typed arrays, stream chunks) live outside V8's heap and count too: a
 * request body kept as bytes is as real a cost as one kept as text. vitest runs without --expose-gc, so
 * the flag is set at run time and `gc` taken from a fresh context.
 */
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

export function liveHeapBytes(): number {
  gc();
  gc();
  const { heapUsed, arrayBuffers } = process.memoryUsage();
  return heapUsed + arrayBuffers;
}
