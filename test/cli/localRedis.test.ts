import { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { localRedis, NoRedisError } from "../../src/cli/localRedis.js";
import { freePort } from "../helpers/freePort.js";
import { TEST_REDIS_URL } from "../helpers/redisTestPrefix.js";

async function pingFails(url: string): Promise<boolean> {
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  client.on("error", () => {});
  try {
    await client.connect();
    await client.ping();
    return false;
  } catch {
    return true;
  } finally {
    client.disconnect();
  }
}

describe("the Redis a laptop command runs on", () => {
  it("uses REDIS_URL as given, and names it without its password", async () => {
    const redis = await localRedis({ env: { REDIS_URL: "redis://app:hunter2@redis.internal:6380/2" } });
    expect(redis.url).toBe("redis://app:hunter2@redis.internal:6380/2");
    expect(redis.description).toBe("using REDIS_URL (redis://<credentials>@redis.internal:6380/2)");
  });

  it("uses the Redis answering on the probed address when REDIS_URL is unset", async () => {
    const { hostname, port } = new URL(TEST_REDIS_URL);
    const redis = await localRedis({ env: { PATH: process.env.PATH }, probe: { host: hostname, port: Number(port) } });
    expect(redis.url).toBe(`redis://${hostname}:${port}`);
    expect(redis.description).toBe(`using the Redis answering on ${hostname}:${port}`);
  });

  it("starts a private redis-server when nothing answers, keeping nothing on disk and evicting nothing, and stops it", async () => {
    const redis = await localRedis({ env: { PATH: process.env.PATH }, probe: { host: "127.0.0.1", port: await freePort() } });
    expect(redis.description).toMatch(/^started a private Redis on 127\.0\.0\.1:\d+ \(.*redis-server, nothing kept on disk; stopped on exit\)$/);
    const client = new Redis(redis.url);
    try {
      expect(await client.config("GET", "save")).toEqual(["save", ""]);
      expect(await client.config("GET", "appendonly")).toEqual(["appendonly", "no"]);
      expect(await client.config("GET", "maxmemory-policy")).toEqual(["maxmemory-policy", "noeviction"]);
    } finally {
      client.disconnect();
    }
    await redis.stop();
    expect(await pingFails(redis.url)).toBe(true);
  });

  it("names the remedies in one line when nothing answers and redis-server is not on PATH", async () => {
    const attempt = localRedis({ env: { PATH: "/nonexistent" }, probe: { host: "127.0.0.1", port: await freePort() } });
    await expect(attempt).rejects.toBeInstanceOf(NoRedisError);
    await expect(attempt).rejects.toThrow(
      /^no Redis: nothing answers on 127\.0\.0\.1:\d+ and redis-server is not on PATH; install redis-server .* or set REDIS_URL$/,
    );
  });
});
