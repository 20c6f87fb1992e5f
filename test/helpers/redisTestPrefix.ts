/**
 * Each service test gets its own Redis key prefix, so tests sharing one Redis
 * (the machine's, or the private one the global setup started) never see each
 * other's jobs, and removes every key under it afterwards.
 */
import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { deleteKeysUnder as deleteKeys } from "../../src/queue/deleteKeys.js";

/** Set by the global setup (`test/globalSetup.ts`) before any test file loads. */
export const TEST_REDIS_URL = requiredRedisUrl();

function requiredRedisUrl(): string {
  const url = process.env.REDIS_URL;
  if (!url) throw new Error("REDIS_URL is unset: run the tests through a vitest config whose globalSetup is test/globalSetup.ts");
  return url;
}

/** A fresh prefix shaped like the production default: a Redis Cluster hash tag. */
export function testPrefix(name: string): string {
  return `{t-${name}-${randomBytes(4).toString("hex")}}`;
}

/** Deletes every key under `prefix`. */
export async function deleteKeysUnder(prefix: string): Promise<void> {
  const redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 3 });
  try {
    await deleteKeys(redis, prefix);
  } finally {
    redis.disconnect();
  }
}
