/**
 * Removes every key under a prefix: what a demo or a test leaves in a shared
 * Redis when it is done with its own queues.
 */
import type { Redis } from "ioredis";

export async function deleteKeysUnder(redis: Redis, prefix: string): Promise<void> {
  // The prefix is literal text: escape the glob's own characters (a hash tag's braces are not among them).
  const pattern = `${prefix.replace(/[*?[\]\\]/g, "\\$&")}*`;
  let cursor = "0";
  do {
    const [next, keys] = await redis.scan(cursor, "MATCH", pattern, "COUNT", 1000);
    cursor = next;
    if (keys.length > 0) await redis.unlink(...keys);
  } while (cursor !== "0");
}
