import { Cluster } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isJobId, newJobId, shardFor, shardOfJobId } from "../../src/queue/compactionJob.js";
import { COMPACTION_QUEUE, serviceKeys, shardPrefix } from "../../src/queue/queueNames.js";
import { markedRequest } from "../helpers/markedConversation.js";
import { startLocalRedisCluster, type LocalRedisCluster } from "../helpers/localRedisCluster.js";
import { bearer } from "../helpers/serviceConfig.js";
import { startServiceHarness, type ServiceHarness } from "../helpers/serviceHarness.js";

/**
 * Partitioned queues (COMPACTD_QUEUE_SHARDS=3) on a real three-master Redis
 * Cluster: the service as a client sees it, one compaction in flight per
 * conversation across shards, and each job's records in its shard's slot.
 */

/** Job `id`'s hash, in its shard's queue. */
function jobKey(prefix: string, id: string): string {
  return `${shardPrefix(prefix, shardOfJobId(id))}:${COMPACTION_QUEUE}:${id}`;
}

/** The payload key of job `id`, named from its submission as the job data records it. */
async function payloadKeyOf(admin: Cluster, prefix: string, id: string): Promise<string> {
  const data = JSON.parse((await admin.hget(jobKey(prefix, id), "data"))!) as { submissionId: string };
  return serviceKeys(prefix).payload(id, data.submissionId);
}

const SHARDS = 3;
let cluster: LocalRedisCluster;
let h: ServiceHarness;
let admin: Cluster;
beforeAll(async () => {
  cluster = await startLocalRedisCluster();
  h = await startServiceHarness("shards", {
    env: { REDIS_CLUSTER_NODES: cluster.nodes[0]!.url, COMPACTD_QUEUE_SHARDS: String(SHARDS) },
    // Slow enough that a second request for a conversation finds the first in flight.
    script: () => ({ kind: "reply", delayMs: 300 }),
  });
  admin = new Cluster([{ host: "127.0.0.1", port: cluster.nodes[0]!.port }]);
  admin.on("error", () => {});
}, 90_000);
afterAll(async () => {
  admin?.disconnect();
  await h?.close();
  await cluster?.stop();
});

describe("sharded compaction queues on a Redis Cluster", () => {
  it("spread conversations over every shard, complete every job and keep its result in its shard's slot", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 24; i++) {
      const { status, body } = await h.submit(markedRequest(`spread-${i}`, { conversationId: `spread-${i}` }));
      expect(status, JSON.stringify(body)).toBe(202);
      ids.push(String(body.id));
    }
    expect(new Set(ids.map(shardOfJobId))).toEqual(new Set([0, 1, 2]));
    for (const id of ids) expect((await h.view(id, 30)).status, id).toBe("completed");
    const keys = serviceKeys(h.config.queuePrefix);
    for (const id of ids) expect(await admin.exists(keys.result(id)), id).toBe(1);
    // Settled for good: the payload is gone, the job's hash stays for the retention.
    for (const id of ids) expect(await admin.exists(await payloadKeyOf(admin, h.config.queuePrefix, id)), id).toBe(0);
    expect((await h.app.inject({ method: "GET", url: "/readyz" })).statusCode).toBe(200);
    expect((await fetch(`http://127.0.0.1:${h.workers[0]!.metricsPort}/readyz`)).status).toBe(200);
  }, 90_000);

  it("keep one compaction in flight per conversation, whichever shard the conversation is on", async () => {
    const first = await Promise.all(Array.from({ length: 6 }, (_, i) => h.submit(markedRequest(`once-${i}`, { conversationId: `once-${i}` }))));
    const again = await Promise.all(Array.from({ length: 6 }, (_, i) => h.submit(markedRequest(`twice-${i}`, { conversationId: `once-${i}` }))));
    expect(new Set(first.map(({ body }) => shardOfJobId(String(body.id)))).size).toBeGreaterThan(1);
    first.forEach(({ status, body }, i) => {
      expect(status).toBe(202);
      expect(again[i]!.status).toBe(409);
      expect((again[i]!.body.error as { jobId: string }).jobId).toBe(body.id);
    });
    for (const { body } of first) expect((await h.view(String(body.id), 30)).status).toBe("completed");
  }, 60_000);

  it("refuse an Idempotency-Key reused for another conversation, which would land in another shard", async () => {
    const request = markedRequest("idem");
    const post = (conversationId: string) =>
      h.app.inject({
        method: "POST",
        url: "/v1/compactions",
        headers: { ...bearer("acme"), "idempotency-key": "shard-key" },
        payload: { ...request, conversationId },
      });
    const created = await post("idem-a");
    expect(created.statusCode).toBe(202);
    expect((await post("idem-a")).headers["idempotent-replayed"]).toBe("true");
    const shardOfConversation = (conversationId: string): number => shardFor("acme", conversationId, "", SHARDS);
    const elsewhere = Array.from({ length: 50 }, (_, i) => `idem-${i}`).find((c) => shardOfConversation(c) !== shardOfConversation("idem-a"))!;
    const reused = await post(elsewhere);
    expect(reused.statusCode, reused.body).toBe(422);
  }, 30_000);

  it("cancel a queued job in any shard and answer 404 for an id naming a shard this deployment does not run", async () => {
    const blockers = await Promise.all(Array.from({ length: 12 }, (_, i) => h.submit(markedRequest(`busy-${i}`, { conversationId: `busy-${i}` }))));
    const target = blockers.map(({ body }) => String(body.id)).reverse().find((id) => shardOfJobId(id) !== 0)!;
    // Queued, its payload sits as raw bytes in its shard's slot, beside the job.
    const payloadKey = await payloadKeyOf(admin, h.config.queuePrefix, target);
    expect(await cluster.slotOf(payloadKey)).toBe(await cluster.slotOf(jobKey(h.config.queuePrefix, target)));
    expect((await admin.getBuffer(payloadKey))!.length).toBeGreaterThan(0);
    const cancelled = await h.app.inject({ method: "DELETE", url: `/v1/compactions/${target}`, headers: bearer("acme") });
    expect(cancelled.statusCode, cancelled.body).toBeLessThan(300);
    expect((await h.view(target, 10)).status).toBe("cancelled");
    expect(await admin.exists(payloadKey)).toBe(0);
    const beyond = newJobId(SHARDS + 1);
    expect(isJobId(beyond)).toBe(true);
    const missing = await h.app.inject({ method: "GET", url: `/v1/compactions/${beyond}`, headers: bearer("acme") });
    expect(missing.statusCode).toBe(404);
  }, 30_000);
});
