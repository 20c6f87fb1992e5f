/**
 * A real Redis Cluster of the test's own: three masters with one replica each,
 * `redis-server --cluster-enabled yes` processes on free ports in a temporary
 * directory, joined by `redis-cli --cluster create`. Tests kill its nodes, so
 * it never shares anything with the Redis on 6379.
 *
 * `stop()` kills every process and deletes the directory; the processes are
 * also killed if the test process exits without calling it.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { waitUntil } from "./waitUntil.js";

export interface ClusterNode {
  readonly port: number;
  readonly url: string;
  readonly process: ChildProcess;
}

export interface LocalRedisCluster {
  readonly nodes: readonly ClusterNode[];
  /** The node currently serving `slot` as master, per a live node's slot map. */
  masterOf(slot: number): Promise<ClusterNode>;
  /** The slot of a key (or hash tag) as Redis computes it. */
  slotOf(key: string): Promise<number>;
  /** A master that does not serve `slot`. */
  otherMasterThan(slot: number): Promise<ClusterNode>;
  /** Waits until every replica of `master` has received all of its writes. */
  replicasCaughtUp(master: ClusterNode): Promise<void>;
  /** SIGKILLs a node, the way a crashed machine goes. */
  kill(node: ClusterNode): void;
  stop(): Promise<void>;
}

export interface LocalClusterOptions {
  /** Masters. Default 3. */
  readonly masters?: number;
  /** Replicas per master: 1 (the default) for failovers, 0 to give masters all the CPU. */
  readonly replicas?: 0 | 1;
  /**
   * `cluster-node-timeout`: how long a silent master takes to be failed
   * over. Low enough for a quick test, high enough that a loaded machine's
   * scheduling hiccup is not taken for a dead node.
   */
  readonly nodeTimeoutMs?: number;
}

const live = new Set<ChildProcess>();
process.once("exit", () => {
  for (const child of live) child.kill("SIGKILL");
});

export async function startLocalRedisCluster(options: LocalClusterOptions = {}): Promise<LocalRedisCluster> {
  const masters = options.masters ?? 3;
  const replicas = options.replicas ?? 1;
  const dir = mkdtempSync(join(tmpdir(), "compactd-cluster-"));
  const nodes: ClusterNode[] = [];
  const admins = new Map<number, Redis>();
  const admin = (node: ClusterNode): Redis => {
    let client = admins.get(node.port);
    if (client === undefined) {
      client = new Redis(node.port, "127.0.0.1", { lazyConnect: false, maxRetriesPerRequest: 1, retryStrategy: () => 200 });
      client.on("error", () => {});
      admins.set(node.port, client);
    }
    return client;
  };
  const alive = (): ClusterNode[] => nodes.filter((node) => node.process.exitCode === null && node.process.signalCode === null);

  const stop = async (): Promise<void> => {
    for (const client of admins.values()) client.disconnect();
    await Promise.all(
      nodes.map(
        (node) =>
          new Promise<void>((resolve) => {
            if (node.process.exitCode !== null || node.process.signalCode !== null) return resolve();
            node.process.once("exit", () => resolve());
            node.process.kill("SIGKILL");
          }),
      ),
    );
    for (const node of nodes) live.delete(node.process);
    rmSync(dir, { recursive: true, force: true });
  };

  try {
    for (const port of await freeClusterPorts(masters * (1 + replicas))) {
      const child = spawn(
        "redis-server",
        [
          "--port", String(port),
          "--bind", "127.0.0.1",
          "--cluster-enabled", "yes",
          "--cluster-config-file", join(dir, `nodes-${port}.conf`),
          "--cluster-node-timeout", String(options.nodeTimeoutMs ?? 2_000),
          "--appendonly", "yes",
          "--appendfilename", `appendonly-${port}.aof`,
          "--appenddirname", `aof-${port}`,
          "--dbfilename", `dump-${port}.rdb`,
          "--save", "",
          "--dir", dir,
          "--logfile", join(dir, `redis-${port}.log`),
        ],
        { stdio: "ignore" },
      );
      live.add(child);
      nodes.push({ port, url: `redis://127.0.0.1:${port}`, process: child });
    }
    for (const node of nodes) await waitUntil(() => admin(node).ping().then(() => true, () => false), `node ${node.port} answers`);
    const created = spawnSync(
      "redis-cli",
      ["--cluster", "create", ...nodes.map((node) => `127.0.0.1:${node.port}`), "--cluster-replicas", String(replicas), "--cluster-yes"],
      { encoding: "utf8", timeout: 60_000 },
    );
    if (created.status !== 0) throw new Error(`redis-cli --cluster create failed: ${created.stdout}${created.stderr}`);
    await waitUntil(
      async () => {
        const infos = await Promise.all(nodes.map((node) => admin(node).cluster("INFO").catch(() => "")));
        return infos.every((info) => /cluster_state:ok/.test(String(info)) && /cluster_known_nodes:(\d+)/.exec(String(info))?.[1] === String(nodes.length));
      },
      "every node sees the whole cluster up",
      30_000,
    );
    await waitUntil(
      async () => {
        const replication = await Promise.all(nodes.map((node) => admin(node).info("replication").catch(() => "")));
        return replication.filter((info) => /role:slave/.test(info) && /master_link_status:up/.test(info)).length === masters * replicas;
      },
      "every replica is in sync with its master",
      30_000,
    );
  } catch (error) {
    await stop();
    throw error;
  }

  const slotOf = async (key: string): Promise<number> => Number(await admin(alive()[0]!).cluster("KEYSLOT", key));

  /** Masters and their slot ranges, from the first live node that answers. */
  const slotMasters = async (): Promise<{ node: ClusterNode; ranges: [number, number][] }[]> => {
    for (const asked of alive()) {
      const slots = (await admin(asked).cluster("SLOTS").catch(() => undefined)) as [number, number, [string, number, ...unknown[]]][] | undefined;
      if (slots === undefined) continue;
      const byPort = new Map<number, [number, number][]>();
      for (const [from, to, [, port]] of slots) byPort.set(port, [...(byPort.get(port) ?? []), [from, to]]);
      return [...byPort].map(([port, ranges]) => ({ node: nodes.find((node) => node.port === port)!, ranges }));
    }
    throw new Error("no node of the cluster answers");
  };

  return {
    nodes,
    slotOf,
    async masterOf(slot) {
      const owner = (await slotMasters()).find(({ ranges }) => ranges.some(([from, to]) => slot >= from && slot <= to));
      if (owner === undefined) throw new Error(`no master serves slot ${slot}`);
      return owner.node;
    },
    async otherMasterThan(slot) {
      const other = (await slotMasters()).find(({ ranges }) => !ranges.some(([from, to]) => slot >= from && slot <= to));
      if (other === undefined) throw new Error(`every master serves slot ${slot}`);
      return other.node;
    },
    async replicasCaughtUp(master) {
      await waitUntil(async () => {
        const info = await admin(master).info("replication");
        const offset = Number(/master_repl_offset:(\d+)/.exec(info)?.[1]);
        const replicas = [...info.matchAll(/slave\d+:.*offset=(\d+)/g)].map((match) => Number(match[1]));
        return replicas.length > 0 && replicas.every((replicaOffset) => replicaOffset >= offset);
      }, `the replicas of ${master.port} have its writes`);
    },
    kill(node) {
      admins.get(node.port)?.disconnect();
      admins.delete(node.port);
      node.process.kill("SIGKILL");
    },
    stop,
  };
}

/** Ports whose cluster bus port (port + 10000) is free as well. */
async function freeClusterPorts(count: number): Promise<number[]> {
  const ports: number[] = [];
  while (ports.length < count) {
    const port = await freePort(0);
    if (port + 10_000 <= 65_535 && !ports.includes(port) && (await freePort(port + 10_000).then(() => true, () => false))) ports.push(port);
  }
  return ports;
}

function freePort(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => {
      const { port: bound } = server.address() as { port: number };
      server.close(() => resolve(bound));
    });
  });
}
