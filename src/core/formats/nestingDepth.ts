/**
 * A bound on how deeply input may nest arrays and objects.
 *
 * `JSON.parse` reads any depth, but nearly everything after it walks JSON
 * recursively: `JSON.stringify` (pricing a tool input, the job payload in
 * Redis, every HTTP response and webhook body), `structuredClone`, the
 * exact-swap digest. V8's `JSON.stringify` runs out of stack near 4,000
 * levels and a JavaScript walker sooner, so a tool input nested 50,000 levels
 * deep would surface as a stack overflow wherever it was first serialized.
 * Making compactd's own walkers iterative would not be enough, since the
 * serializers of Node, fastify and BullMQ would still recurse; so input is
 * refused at the door instead, with an error naming the field, by an
 * iterative check. Real tool inputs nest a few dozen levels at most.
 */

/** The deepest nesting of arrays and objects accepted, counted from the top of the request or conversation. */
export const MAX_NESTING_DEPTH = 256;

/** How many levels below the checked value an error's field path names; deeper parts share their ancestor's path. */
const NAMED_LEVELS = 5;

/**
 * The field at which `value` first nests deeper than {@link MAX_NESTING_DEPTH}
 * (named down to a few levels below `path`), or undefined when it does not.
 * Walks with an explicit stack, so any depth is safe to check.
 */
export function tooDeeplyNested(value: unknown, path: string): string | undefined {
  const stack: { value: unknown; depth: number; path: string }[] = [{ value, depth: 0, path }];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    if (next.value === null || typeof next.value !== "object") continue;
    const depth = next.depth + 1;
    if (depth > MAX_NESTING_DEPTH) return next.path;
    const named = depth <= NAMED_LEVELS;
    if (Array.isArray(next.value)) {
      next.value.forEach((item, i) => stack.push({ value: item, depth, path: named ? `${next.path}[${i}]` : next.path }));
    } else {
      for (const [key, item] of Object.entries(next.value)) {
        stack.push({ value: item, depth, path: named ? fieldPath(next.path, key) : next.path });
      }
    }
  }
  return undefined;
}

function fieldPath(parent: string, key: string): string {
  const name = /^[A-Za-z_$][\w$]*$/.test(key) ? key : `[${JSON.stringify(key)}]`;
  if (parent === "") return name;
  return name.startsWith("[") ? `${parent}${name}` : `${parent}.${name}`;
}

/** The sentence that says what is wrong with the field {@link tooDeeplyNested} returned. */
export const TOO_DEEPLY_NESTED = `nests arrays and objects more than ${MAX_NESTING_DEPTH} levels deep`;
