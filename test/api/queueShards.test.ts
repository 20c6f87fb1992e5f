import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp } from "../../src/api/buildApp.js";
import type { Config } from "../../src/config.js";
import { shardFor, shardOfJobId } from "../../src/queue/compactionJob.js";
import { shardPrefix } from "../../src/queue/queueNames.js";
import { markedRequest } from "../helpers/markedConversation.js";
import { deleteKeysUnder } from "../helpers/redisTestPrefix.js";
import { bearer, serviceConfig } from "../helpers/serviceConfig.js";

/** Two shards on the standalone test Redis, no worker: jobs stay queued. */
const SHARDS = 2;
let config: Config;
let app: FastifyInstance;
beforeAll(async () => {
  config = serviceConfig("api-shards", { COMPACTD_QUEUE_SHARDS: String(SHARDS), COMPACTD_MAX_BACKLOG: "4" });
  app = await buildApp(config);
});
afterAll(async () => {
  await app.close();
  for (let shard = 0; shard < SHARDS; shard++) await deleteKeysUnder(shardPrefix(config.queuePrefix, shard));
});

const submit = (conversationId: string) =>
  app.inject({ method: "POST", url: "/v1/compactions", headers: bearer("acme"), payload: markedRequest(conversationId, { conversationId }) });

/** Conversations of tenant acme that land in `shard`. */
function conversationsIn(shard: number, count: number): string[] {
  const found: string[] = [];
  for (let i = 0; found.length < count; i++) if (shardFor("acme", `c-${i}`, "", SHARDS) === shard) found.push(`c-${i}`);
  return found;
}

describe("sharded queues behind the API", () => {
  it("queue each conversation in its shard, find every job by id, and hold each shard to its share of the backlog", async () => {
    const [a1, a2, a3] = conversationsIn(0, 3);
    const [b1] = conversationsIn(1, 1);
    const ids: string[] = [];
    for (const conversationId of [a1!, a2!, b1!]) {
      const response = await submit(conversationId);
      expect(response.statusCode, response.body).toBe(202);
      ids.push(response.json().id);
    }
    expect(ids.map(shardOfJobId)).toEqual([0, 0, 1]);
    for (const id of ids) {
      const view = await app.inject({ method: "GET", url: `/v1/compactions/${id}`, headers: bearer("acme") });
      expect(view.json()).toMatchObject({ id, status: "queued" });
    }
    // Shard 0 holds its share (4 / 2 shards); shard 1 still has room.
    const refused = await submit(a3!);
    expect(refused.statusCode).toBe(429);
    expect(refused.json().error.message).toContain("2 compactions are waiting (limit 2)");
    expect((await submit(conversationsIn(1, 2)[1]!)).statusCode).toBe(202);
  });
});
