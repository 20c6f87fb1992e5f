/**
 * Each service test gets its own Redis key prefix, so tests sharing the one
 * Redis on 127.0.0.1:6379 never see each other's jobs, and removes every key
 * under it afterwards.
 */
import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";

export const TEST_REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";

/** A fresh prefix shaped like the production default: a Redis Cluster hash tag. */
export function testPrefix(name: string): string {
  return `{t-${name}-${randomBytes(4).toString("hex")}}`;
}

/** Deletes every key under `prefix`. */
export async function deleteKeysUnder(prefix: string): Promise<void> {
  const redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 3 });
  try {
    const pattern = `${prefix.replace(/[*?[\]\\]/g, "\\$&")}*`;
    let cursor = "0";
    do {
      const [next, keys] = await redis.scan(cursor, "MATCH", pattern, "COUNT", 1000);
      cursor = next;
      if (keys.length > 0) await redis.unlink(...keys);
    } while (cursor !== "0");
  } finally {
    redis.disconnect();
  }
}
