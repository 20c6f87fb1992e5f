/**
 * A callback host whose DNS does not answer holds up no other lookup of the
 * process. Run against the real system resolver: a child process in network
 * and mount namespaces of its own, whose /etc/resolv.conf points at a UDP
 * socket on 127.0.0.1:53 that reads queries and never answers, asks for one
 * such name many times (a burst of callbacks to it, each new connection
 * looking its host up), then for `localhost` (from /etc/hosts, as any other
 * lookup of the process: another tenant's host, the summarizer's on a new
 * connection). getaddrinfo runs on libuv's thread pool, and libuv lets
 * lookups take at most half of it, two threads of the default four.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { canIsolateNetwork } from "../helpers/isolatedNetwork.js";
import { repoRoot } from "../helpers/repoRoot.js";

/** How long the resolver waits for an answer: far longer than the test waits for `localhost`. */
const RESOLVER_TIMEOUT_SECONDS = 30;

/** The wait for `localhost`: a lookup that is not held up answers in milliseconds. */
const LOCALHOST_DEADLINE_MS = 5_000;

/** Lookups of the hung name, started together. */
const HUNG_LOOKUPS = 10;

const PROBE = `
import dgram from "node:dgram";
import { lookup } from "node:dns/promises";
const { systemResolveHost } = await import(process.argv[2]);
const blackhole = dgram.createSocket("udp4");
let queries = 0;
blackhole.on("message", () => queries++);
await new Promise((resolve) => blackhole.bind(53, "127.0.0.1", resolve));
for (let i = 0; i < ${HUNG_LOOKUPS}; i++) systemResolveHost("hung.invalid-tld-compactd-test").catch(() => {});
await new Promise((resolve) => setTimeout(resolve, 500));
const started = Date.now();
const answered = await Promise.race([
  lookup("localhost").then(() => true, () => true),
  new Promise((resolve) => setTimeout(() => resolve(false), ${LOCALHOST_DEADLINE_MS})),
]);
process.stdout.write(JSON.stringify({ localhostAnswered: answered, localhostMs: Date.now() - started, queries }) + "\\n");
// Exiting would wait for the threads still in getaddrinfo; stdout to a pipe is written synchronously.
process.kill(process.pid, "SIGKILL");
`;

describe.runIf(canIsolateNetwork)("a callback host whose resolver does not answer", () => {
  it("holds one lookup thread however many callbacks ask for it, and other lookups go on", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "compactd-hung-dns-"));
    writeFileSync(path.join(dir, "resolv.conf"), `nameserver 127.0.0.1\noptions timeout:${RESOLVER_TIMEOUT_SECONDS} attempts:1\n`);
    writeFileSync(path.join(dir, "probe.mjs"), PROBE);
    const resolveHost = path.join(repoRoot, "dist/webhooks/resolveHost.js");
    const script = 'ip link set lo up && mount --bind "$1/resolv.conf" /etc/resolv.conf && exec node "$1/probe.mjs" "$2"';
    const run = spawnSync("unshare", ["-m", "-n", "sh", "-c", script, "sh", dir, resolveHost], { encoding: "utf8", timeout: 60_000 });
    expect(run.signal, `${run.stderr}${run.stdout}`).toBe("SIGKILL");
    const probe = JSON.parse(run.stdout.trim().split("\n").pop()!) as { localhostAnswered: boolean; localhostMs: number; queries: number };
    // One lookup of the hung name reached the resolver: an A and an AAAA query.
    expect(probe.queries).toBe(2);
    expect(probe.localhostAnswered, `localhost was not answered within ${LOCALHOST_DEADLINE_MS} ms`).toBe(true);
  });
});
