/**
 * The Redis a laptop command runs on (`compactd dev`, `compactd demo`, and
 * the test suite's global setup): `REDIS_URL` when it is set, else the Redis
 * answering on 127.0.0.1:6379, else a private `redis-server` on a free port
 * with no persistence, stopped on exit.
 *
 * The private one comes from `redis-memory-server`, which spawns the
 * `redis-server` found on PATH and also kills it when this process dies
 * without cleaning up, so no stray server outlives a crashed run. `serve` and
 * `worker` never come here: production processes must share one Redis, and a
 * private one would silently split the queue.
 */
import { accessSync, constants } from "node:fs";
import { createConnection } from "node:net";
import path from "node:path";
import { withoutCredentials } from "../config.js";

/** Where a Redis usually answers on a developer's machine. */
const DEFAULT_LOCAL_REDIS = { host: "127.0.0.1", port: 6379 } as const;

/** No Redis could be had; the message names the remedies in one line. */
export class NoRedisError extends Error {
  constructor(reason: string) {
    super(`no Redis: ${reason}; install redis-server (e.g. apt-get install redis-server, brew install redis) or set REDIS_URL`);
    this.name = "NoRedisError";
  }
}

export interface LocalRedis {
  readonly url: string;
  /** One line for the user saying which Redis this is. */
  readonly description: string;
  /** Stops the private server, if one was started; a no-op otherwise. */
  stop(): Promise<void>;
}

export interface LocalRedisOptions {
  /** The environment: REDIS_URL and PATH are read from it. */
  readonly env: NodeJS.ProcessEnv;
  /** Where to look for an already running Redis; tests point it at a closed port. */
  readonly probe?: { readonly host: string; readonly port: number };
}

/** Finds or starts the Redis to use; throws {@link NoRedisError} when there is none. */
export async function localRedis({ env, probe = DEFAULT_LOCAL_REDIS }: LocalRedisOptions): Promise<LocalRedis> {
  const given = env.REDIS_URL?.trim();
  if (given) return { url: given, description: `using REDIS_URL (${withoutCredentials(given)})`, stop: async () => {} };

  if (await answersPing(probe.host, probe.port)) {
    const url = `redis://${probe.host}:${probe.port}`;
    return { url, description: `using the Redis answering on ${probe.host}:${probe.port}`, stop: async () => {} };
  }

  const binary = findOnPath("redis-server", env.PATH ?? "");
  if (binary === null) throw new NoRedisError(`nothing answers on ${probe.host}:${probe.port} and redis-server is not on PATH`);
  return startPrivateRedis(binary, probe);
}

async function startPrivateRedis(binary: string, probe: { host: string; port: number }): Promise<LocalRedis> {
  let RedisMemoryServer: typeof import("redis-memory-server").RedisMemoryServer;
  try {
    ({ RedisMemoryServer } = await import("redis-memory-server"));
  } catch {
    // An optional dependency: it is missing when its install failed.
    throw new NoRedisError(`nothing answers on ${probe.host}:${probe.port} and the optional package redis-memory-server is not installed`);
  }
  const server = new RedisMemoryServer({
    binary: { systemBinary: binary },
    // noeviction as in production: an evicting Redis drops queued jobs.
    instance: { ip: "127.0.0.1", args: ["--maxmemory-policy", "noeviction"] },
    autoStart: false,
  });
  try {
    await server.start();
  } catch (err) {
    throw new NoRedisError(`${binary} did not start (${err instanceof Error ? err.message : String(err)})`);
  }
  const port = await server.getPort();
  return {
    url: `redis://127.0.0.1:${port}`,
    description: `started a private Redis on 127.0.0.1:${port} (${binary}, nothing kept on disk; stopped on exit)`,
    stop: async () => {
      await server.stop();
    },
  };
}

/**
 * True when a Redis at host:port answers PING. One that wants a password
 * answers with an error instead, and counts as absent: without the password
 * (which only REDIS_URL can carry) it is of no use.
 */
function answersPing(host: string, port: number, timeoutMs = 1_000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host, port });
    let reply = "";
    const finish = (answered: boolean) => {
      socket.destroy();
      resolve(answered);
    };
    socket.setTimeout(timeoutMs, () => finish(false));
    socket.on("error", () => finish(false));
    socket.on("connect", () => socket.write("PING\r\n"));
    socket.on("data", (chunk: Buffer) => {
      reply += chunk.toString("latin1");
      if (reply.includes("\r\n")) finish(reply.startsWith("+PONG"));
    });
  });
}

function findOnPath(command: string, searchPath: string): string | null {
  for (const dir of searchPath.split(path.delimiter)) {
    if (dir === "") continue;
    const candidate = path.join(dir, command);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not in this directory
    }
  }
  return null;
}
