import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
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

  it("classifies every error ioredis raises by itself: retryable unless it says compactd misused the client", () => {
    // A new ioredis release that adds a transient error must not turn an outage into 500s:
    // every message ioredis builds is read from its sources and must be one or the other.
    const misuse = [
      /^All (the )?keys in (a|the) pipeline/,
      /^Connection in subscriber mode/,
      /^Connection is in monitoring mode/,
      /^Invalid (argument|role|node key)/,
      /^Pipeline cannot be used/,
      /^Redis is already connecting/,
      /^Requires (at least one sentinel|the name of master)/,
      /^`startupNodes` should contain/,
      /^"sendCommand" is not implemented/,
      /^Sharded subscriber /,
      /^Invalid option /,
      /^c$/, // a doc comment's example
    ];
    const messages = ioredisErrorMessages();
    expect(messages.length).toBeGreaterThan(20);
    const unclassified = messages.filter((message) => !misuse.some((m) => m.test(message)) && redisFaultOf(new Error(message)) === undefined);
    expect(unclassified).toEqual([]);
    for (const message of messages.filter((m) => misuse.some((pattern) => pattern.test(m)))) expect(redisFaultOf(new Error(message)), message).toBeUndefined();
  });
});

/** The text of every `new Error("…")` in ioredis's built sources; a template or concatenation keeps its literal prefix. */
function ioredisErrorMessages(): string[] {
  const root = dirname(createRequire(import.meta.url).resolve("ioredis"));
  const files = readdirSync(root, { recursive: true, encoding: "utf8" }).filter((file) => file.endsWith(".js"));
  const messages = new Set<string>();
  for (const file of files) {
    for (const [, double, single, template] of readFileSync(join(root, file), "utf8").matchAll(/new Error\((?:"([^"]*)"|'([^']*)'|`([^`$]*))/g)) {
      messages.add((double ?? single ?? template)!);
    }
  }
  return [...messages];
}
