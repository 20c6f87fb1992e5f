import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { redisFaultOf } from "../../src/queue/redisFaults.js";
import { TEST_REDIS_URL } from "../helpers/redisTestPrefix.js";

/**
 * The errors are real replies from a real Redis: a script answers with the
 * error text a cluster, a loading or read-only node would send, so the
 * classification sees exactly the error object ioredis hands the API.
 */
let redis: Redis;
beforeAll(() => {
  redis = new Redis(TEST_REDIS_URL);
});
afterAll(() => redis.disconnect());

async function replyError(text: string): Promise<unknown> {
  return redis.eval("return redis.error_reply(ARGV[1])", 0, text).then(
    () => new Error("no error"),
    (error: unknown) => error,
  );
}

describe("classifying Redis errors", () => {
  it.each([
    ["CLUSTERDOWN The cluster is down", "cluster"],
    ["CLUSTERDOWN Hash slot not served", "cluster"],
    ["MOVED 3999 127.0.0.1:6381", "cluster"],
    ["ASK 3999 127.0.0.1:6381", "cluster"],
    ["TRYAGAIN Multiple keys request during rehashing of slot", "cluster"],
    ["LOADING Redis is loading the dataset in memory", "loading"],
    ["READONLY You can't write against a read only replica.", "readonly"],
    ["NOREPLICAS Not enough good replicas to write.", "readonly"],
    ["MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.", "readonly"],
    ["BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSCRIPT.", "busy"],
    ["OOM command not allowed when used memory > 'maxmemory'.", "out_of_memory"],
  ])("treats the reply %j as retryable (%s)", async (text, kind) => {
    expect(redisFaultOf(await replyError(text))).toBe(kind);
  });

  it.each(["ERR unknown command 'FOO'", "WRONGTYPE Operation against a key holding the wrong kind of value", "NOSCRIPT No matching script"])(
    "leaves the reply %j to be a bug (500)",
    async (text) => {
      expect(redisFaultOf(await replyError(text))).toBeUndefined();
    },
  );

  it("treats ioredis's own connection, timeout and cluster errors as retryable", async () => {
    const unreachable = new Redis("redis://127.0.0.1:1", { maxRetriesPerRequest: 0, retryStrategy: () => null, lazyConnect: true });
    const offline = new Redis("redis://127.0.0.1:1", { enableOfflineQueue: false, lazyConnect: true });
    for (const connection of [unreachable, offline]) connection.on("error", () => undefined);
    const refused = await unreachable.connect().then(() => undefined, (error: unknown) => error);
    expect(redisFaultOf(refused)).toBe("connection");
    expect(redisFaultOf(await offline.get("k").catch((error: unknown) => error))).toBe("connection");
    const slow = new Redis(TEST_REDIS_URL, { commandTimeout: 50 });
    try {
      // A command that takes longer than the timeout, without stalling the shared Redis for anyone else.
      const timedOut = await slow.blpop(`compactd-test-never-${Date.now()}`, 1).catch((error: unknown) => error);
      expect(redisFaultOf(timedOut)).toBe("timeout");
    } finally {
      slow.disconnect();
      unreachable.disconnect();
      offline.disconnect();
    }
    expect(redisFaultOf(new Error("Too many Cluster redirections. Last error: MOVED 1 x:1"))).toBe("cluster");
    expect(redisFaultOf(new Error("Failed to refresh slots cache."))).toBe("cluster");
    expect(redisFaultOf(new TypeError("cannot read properties of undefined"))).toBeUndefined();
    expect(redisFaultOf("not an error")).toBeUndefined();
  });
});
