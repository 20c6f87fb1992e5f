/**
 * When the API's connection to Redis can take a command. Its connection keeps
 * no offline queue (a request is answered 503 rather than held while Redis is
 * away), so a command sent on a connection that cannot take it fails at once.
 * A connection the server has just closed still says "ready" until ioredis
 * handles the close; a request that checked only that, in that instant, was
 * answered 503 while Redis was back within milliseconds.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { Redis } from "ioredis";
import { closeRedisConnection, createRedisConnection } from "../../src/queue/redisConnection.js";
import { whenAcceptingCommands } from "../../src/queue/redisReadiness.js";
import { TEST_REDIS_URL } from "../helpers/redisTestPrefix.js";

/** Far longer than a reconnection to a local Redis takes. */
const WAIT_MS = 5_000;

const unavailable = (): Error => new Error("unavailable");

let redis: Redis | undefined;
afterEach(async () => {
  if (redis !== undefined) await closeRedisConnection(redis);
  redis = undefined;
});

describe("whenAcceptingCommands", () => {
  it("waits out a connection that still says ready but whose socket is gone, then the command goes through", async () => {
    redis = createRedisConnection(TEST_REDIS_URL, "api", "readiness-test");
    await whenAcceptingCommands(redis, WAIT_MS, unavailable);
    // The socket goes away; ioredis learns of it only when the event loop turns.
    redis.stream.destroy();
    expect(redis.status).toBe("ready");
    await whenAcceptingCommands(redis, WAIT_MS, unavailable);
    expect(await redis.ping()).toBe("PONG");
  });

  it("gives up after its wait when Redis does not come back", async () => {
    redis = createRedisConnection("redis://127.0.0.1:1", "api", "readiness-test");
    redis.on("error", () => undefined);
    await expect(whenAcceptingCommands(redis, 300, unavailable)).rejects.toThrow("unavailable");
  });
});
