import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { conversation, reactTurn } from "../helpers/conversations.js";
import { deleteKeysUnder, testPrefix } from "../helpers/redisTestPrefix.js";
import { cliPath, runCli } from "../helpers/runCli.js";
import { freePort } from "../helpers/freePort.js";
import { repoRoot } from "../helpers/repoRoot.js";
import { waitUntil } from "../helpers/waitUntil.js";
import { canIsolateNetwork, inIsolatedNetwork } from "../helpers/isolatedNetwork.js";


const prefixes: string[] = [];
afterAll(async () => {
  for (const p of prefixes) await deleteKeysUnder(p);
});

describe("compactd serve | worker | dev", () => {
  it("refuses to serve without API keys, naming the variable", async () => {
    const run = await runCli(["serve"], { env: { COMPACTD_API_KEYS: "" } });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/COMPACTD_API_KEYS is not set/);
  });

  it("refuses to start on a wrong variable, naming it and the value", async () => {
    const run = await runCli(["worker"], { env: { PORT: "eighty", WORKER_CONCURRENCY: "-3" } });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/PORT="eighty": expected an integer/);
    expect(run.stderr).toMatch(/WORKER_CONCURRENCY="-3"/);
    expect(run.stderr).not.toMatch(/\n\s+at /);
  });

  it("runs the API and a worker in one process, compacts a conversation, and exits 0 on SIGTERM", async () => {
    const prefix = testPrefix("cli-dev");
    prefixes.push(prefix);
    const port = await freePort();
    const child = spawn(process.execPath, [cliPath, "dev"], {
      cwd: repoRoot,
      env: { ...process.env, ANTHROPIC_API_KEY: "", COMPACTD_API_KEYS: "", PORT: String(port), METRICS_PORT: String(await freePort()), COMPACTD_QUEUE_PREFIX: prefix },
    });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on("close", resolve));
    try {
      await waitUntil(() => stderr.includes("API and worker on"), "compactd dev has started", 90_000);
      expect(stderr).toMatch(/accepting the key "dev" for tenant "local"/);
      // dev is a local tool with a well-known key: it listens on loopback only.
      expect(tcpListeners(port)).toEqual(["0100007F"]);
      const base = `http://127.0.0.1:${port}`;
      const headers = { authorization: "Bearer dev", "content-type": "application/json" };
      const messages = conversation(...Array.from({ length: 6 }, () => reactTurn({ rounds: 6, toolResultChars: 3_500 })));
      const created = await fetch(`${base}/v1/compactions`, {
        method: "POST",
        headers,
        body: JSON.stringify({ messages, contextWindow: 100_000, settings: { keepRecentTokens: 8_000 } }),
      });
      expect(created.status).toBe(202);
      const { id } = (await created.json()) as { id: string };
      const done = await fetch(`${base}/v1/compactions/${id}?wait=20`, { headers });
      const view = (await done.json()) as { status: string; result: { degraded: boolean; summarizer: string; messages: unknown[]; replaces: { count: number } } };
      expect(view.status).toBe("completed");
      // No key: the offline summarizer, chosen rather than fallen back to.
      expect(view.result).toMatchObject({ degraded: false, summarizer: "offline" });
      expect(view.result.replaces.count).toBe(messages.length);
    } finally {
      child.kill("SIGTERM");
    }
    expect(await exited).toBe(0);
    expect(stderr).toMatch(/SIGTERM received/);
  }, 150_000);

  describe.skipIf(!canIsolateNetwork)("on a machine where no Redis answers on 127.0.0.1:6379", () => {
    /**
     * Runs `compactd <args>` in a network namespace of its own until `until`
     * shows on stderr, then stops it; without `until`, until it exits.
     */
    async function runIsolated(args: string[], env: Record<string, string>, until?: RegExp): Promise<{ code: number | null; stderr: string }> {
      const [command, ...rest] = inIsolatedNetwork(["env", "-u", "REDIS_URL", ...Object.entries(env).map(([k, v]) => `${k}=${v}`), process.execPath, cliPath, ...args]);
      const child = spawn(command, rest, { cwd: repoRoot, env: { ...process.env, ANTHROPIC_API_KEY: "" } });
      let stderr = "";
      child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
      const exited = new Promise<number | null>((resolve) => child.on("close", resolve));
      let finished = false;
      void exited.then(() => (finished = true));
      await waitUntil(() => until?.test(stderr) || finished, `compactd ${args[0]} printed ${until ?? "its last line"}`, 90_000);
      child.kill("SIGTERM");
      return { code: await exited, stderr };
    }

    it("dev starts a private Redis, says so in one line, and stops it on exit", async () => {
      const run = await runIsolated(["dev"], { COMPACTD_API_KEYS: "" }, /API and worker on/);
      expect(run.stderr).toMatch(/^compactd dev: started a private Redis on 127\.0\.0\.1:\d+ \(.*\)$/m);
      expect(run.code).toBe(0);
    }, 120_000);

    it("dev names the remedies in one line, without a stack trace, when redis-server is not on PATH either", async () => {
      const run = await runIsolated(["dev"], { COMPACTD_API_KEYS: "", PATH: "/nonexistent" });
      expect(run.stderr).toMatch(/^compactd: no Redis: .* install redis-server .* or set REDIS_URL$/m);
      expect(run.stderr).not.toMatch(/\n\s+at /);
      expect(run.code).toBe(1);
    }, 120_000);

    it.each([
      ["serve", { COMPACTD_API_KEYS: "acme:k" }],
      ["worker", {}],
    ])("%s never starts a private Redis: it names the shared one it waits for", async (kind, env) => {
      const run = await runIsolated([kind], env, /using the Redis at/);
      expect(run.stderr).toMatch(new RegExp(`^compactd ${kind}: using the Redis at redis://127\\.0\\.0\\.1:6379 \\(REDIS_URL\\)$`, "m"));
      expect(run.stderr).not.toMatch(/private/);
      // Only a worker summarizes, so only it says what a missing key means for the results.
      expect(run.stderr.match(/ANTHROPIC_API_KEY is not set; every result will be an offline summary/g)?.length ?? 0).toBe(
        kind === "worker" ? 1 : 0,
      );
    }, 120_000);
  });
});

/**
 * The local addresses listening on TCP `port`, as the kernel's socket tables
 * write them (hex; 127.0.0.1 is 0100007F, every IPv4 interface 00000000).
 */
function tcpListeners(port: number): string[] {
  const suffix = `:${port.toString(16).toUpperCase().padStart(4, "0")}`;
  const LISTEN = "0A";
  return ["/proc/net/tcp", "/proc/net/tcp6"].flatMap((table) =>
    readFileSync(table, "utf8")
      .split("\n")
      .slice(1)
      .map((line) => line.trim().split(/\s+/))
      .filter(([, local, , state]) => state === LISTEN && local?.endsWith(suffix))
      .map(([, local]) => local!.slice(0, -suffix.length)),
  );
}
