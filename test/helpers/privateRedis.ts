/**
 * A redis-server of the test's own, on a free port, for tests that stall,
 * pause, fill, demote or kill Redis: the shared Redis on 6379 serves every
 * other test running at the same time and must never be touched that way.
 * Nothing is kept: the server works in a temporary folder of its own (a
 * replica's full sync writes an RDB file even with saving off), and `stop()`
 * kills it and removes the folder.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { freePort } from "./freePort.js";
import { waitUntil } from "./waitUntil.js";

export interface PrivateRedis {
  readonly port: number;
  readonly url: string;
  /** A connection for the test's own commands (DEBUG SLEEP, CLIENT PAUSE, CONFIG SET…). */
  admin(): Redis;
  /**
   * Stops the server's process (SIGSTOP) without closing its sockets: a Redis
   * that went away as a vanished host or a cut network does, where clients
   * stay connected and wait for answers that never come. `stop()` still ends it.
   */
  freeze(): void;
  stop(): Promise<void>;
}

/** `args` are extra redis-server options, e.g. `["--replicaof", "127.0.0.1", "6380"]`. */
export async function startPrivateRedis(args: readonly string[] = []): Promise<PrivateRedis> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "compactd-redis-"));
  const child: ChildProcess = spawn(
    "redis-server",
    ["--port", String(port), "--bind", "127.0.0.1", "--dir", dir, "--save", "", "--appendonly", "no", "--enable-debug-command", "yes", ...args],
    { stdio: "ignore" },
  );
  const url = `redis://127.0.0.1:${port}`;
  const admins: Redis[] = [];
  const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  probe.on("error", () => undefined);
  try {
    await waitUntil(
      () =>
        probe
          .connect()
          .then(() => true)
          .catch(() => false),
      `redis-server on port ${port} accepts connections`,
    );
  } finally {
    probe.disconnect();
  }
  return {
    port,
    url,
    admin() {
      const admin = new Redis(url, { maxRetriesPerRequest: null });
      admin.on("error", () => undefined);
      admins.push(admin);
      return admin;
    },
    freeze() {
      child.kill("SIGSTOP");
    },
    async stop() {
      for (const admin of admins) admin.disconnect();
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once("exit", resolve));
        child.kill("SIGKILL");
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
