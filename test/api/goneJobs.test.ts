/**
 * After Redis loses its data, a job the agent was given an id for must not
 * look like one that never existed: 410 `gone` for issued ids, 404 for the rest.
 */
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp } from "../../src/api/buildApp.js";
import type { Config } from "../../src/config.js";
import { idempotentBatchId, isIssuedId, jobIdInShard, newBatchId, newJobId, shardOfJobId } from "../../src/queue/compactionJob.js";
import { createCompactionQueue } from "../../src/queue/compactionQueue.js";
import { shardPrefix } from "../../src/queue/queueNames.js";
import { closeRedisConnection, createRedisConnection } from "../../src/queue/redisConnection.js";
import { conversation, reactTurn } from "../helpers/conversations.js";
import { deleteKeysUnder } from "../helpers/redisTestPrefix.js";
import { bearer, serviceConfig } from "../helpers/serviceConfig.js";

function compactable(conversationId: string): Record<string, unknown> {
  const messages = conversation(...Array.from({ length: 5 }, () => reactTurn({ rounds: 3, toolResultChars: 2_000 })));
  return { messages, contextWindow: 20_000, settings: { reserveTokens: 4_000 }, conversationId };
}

let app: FastifyInstance;
let config: Config;
beforeAll(async () => {
  config = serviceConfig("gone");
  app = await buildApp(config);
});
afterAll(async () => {
  await app.close();
  await deleteKeysUnder(config.queuePrefix);
});

const get = (url: string, tenant: "acme" | "globex" = "acme") => app.inject({ method: "GET", url, headers: bearer(tenant) });

/** A batch of one compaction per conversation, accepted. */
async function postBatch(...conversationIds: string[]): Promise<Awaited<ReturnType<FastifyInstance["inject"]>>> {
  const batch = await app.inject({
    method: "POST",
    url: "/v1/compactions/batch",
    headers: bearer("acme"),
    payload: { items: conversationIds.map(compactable) },
  });
  expect(batch.statusCode, batch.body).toBe(202);
  return batch;
}

describe("ids the service issued", () => {
  it("carry a check that tells them from mistyped, made-up and older ids", () => {
    for (const id of [newJobId(), newJobId(7), jobIdInShard("ab".repeat(16), 3), newBatchId(), idempotentBatchId("acme", "key-1")]) {
      expect(isIssuedId(id), id).toBe(true);
      const typo = id.slice(0, 10) + (id[10] === "0" ? "1" : "0") + id.slice(11);
      expect(isIssuedId(typo), typo).toBe(false);
    }
    // Ids issued before they carried a check, and ids of no kind at all.
    expect(isIssuedId(`cmp_${"0123456789abcdef".repeat(2)}`)).toBe(false);
    expect(isIssuedId("cmp_nothex")).toBe(false);
    expect(isIssuedId("anything")).toBe(false);
  });
});

describe("a job or batch Redis no longer holds", () => {
  it("answers 410 gone for an issued id and 404 for one never issued, for GET and DELETE alike", async () => {
    const job = await app.inject({ method: "POST", url: "/v1/compactions", headers: bearer("acme"), payload: compactable("c-1") });
    expect(job.statusCode, job.body).toBe(202);
    const jobId = String(job.json().id);
    const batch = await postBatch("c-2", "c-3");
    const batchId = String(batch.json().id);
    // Stored: another tenant still gets 404, as for any job not theirs.
    expect((await get(`/v1/compactions/${jobId}`, "globex")).statusCode).toBe(404);
    expect((await get(`/v1/batches/${batchId}`, "globex")).statusCode).toBe(404);

    // Redis loses everything (a restart without persistence, a flush, a replacement).
    await deleteKeysUnder(config.queuePrefix);

    for (const response of [
      await get(`/v1/compactions/${jobId}`),
      await app.inject({ method: "DELETE", url: `/v1/compactions/${jobId}`, headers: bearer("acme") }),
      await get(`/v1/batches/${batchId}`),
    ]) {
      expect(response.statusCode, response.body).toBe(410);
      expect(response.json().error.code).toBe("gone");
      expect(response.json().error.message).toMatch(/no longer stored.*submit it again/);
    }
    const neverIssued = jobId.slice(0, 10) + (jobId[10] === "0" ? "1" : "0") + jobId.slice(11);
    for (const url of [`/v1/compactions/${neverIssued}`, `/v1/compactions/${newJobId().replace(/.{10}$/, "0000000000")}`, `/v1/batches/bat_${"0".repeat(32)}`]) {
      const response = await get(url);
      expect(response.statusCode, url).toBe(404);
      expect(response.json().error.code).toBe("not_found");
    }
  });

  it("lists a batch item whose job's own record was lost as queued while its id waits in the queue, and as failed once that is gone too", async () => {
    const batch = await postBatch("c-lost", "c-kept");
    const batchId = String(batch.json().id);
    const [lost, kept] = (batch.json().items as { id: string }[]).map((item) => item.id);
    const redis = createRedisConnection(config.redisUrl, "worker");
    const queue = createCompactionQueue(redis, { prefix: shardPrefix(config.queuePrefix, shardOfJobId(lost!)), attempts: 3, backoffMs: 10, retentionSeconds: 60 });
    try {
      // Lost (an evicting maxmemory-policy, a failover that lost writes): the job's hash, not its place in the queue.
      await redis.del(`${queue.opts.prefix}:${queue.name}:${lost}`);
      const listed = await get(`/v1/batches/${batchId}`);
      expect(listed.statusCode, listed.body).toBe(200);
      expect(listed.json()).toMatchObject({ status: "running", items: [{ id: lost, status: "queued" }, { id: kept, status: "queued" }] });
      for (const response of [await get(`/v1/compactions/${lost}`), await app.inject({ method: "DELETE", url: `/v1/compactions/${lost}`, headers: bearer("acme") })]) {
        expect(response.statusCode, response.body).toBe(410);
      }
      // Its conversation is free: its in-flight key names a job that is gone.
      const again = await app.inject({ method: "POST", url: "/v1/compactions", headers: bearer("acme"), payload: compactable("c-lost") });
      expect(again.statusCode, again.body).toBe(202);

      // A worker took it and failed it, which removes it: nothing is left of it in the queue.
      await queue.remove(lost!);
      const ended = await get(`/v1/batches/${batchId}`);
      expect(ended.statusCode, ended.body).toBe(200);
      expect(ended.json()).toMatchObject({ status: "running", counts: { failed: 1, queued: 1 }, items: [{ id: lost, status: "failed" }, { id: kept, status: "queued" }] });
    } finally {
      await queue.close();
      await closeRedisConnection(redis);
    }
  });
});
