/**
 * The live heap: bytes in use after forced full collections, for tests that
 * hold what something keeps to a bound. vitest runs without --expose-gc, so
 * the flag is set at run time and `gc` taken from a fresh context.
 */
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

export function liveHeapBytes(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}
