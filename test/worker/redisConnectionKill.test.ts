import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { markedRequest } from "../helpers/markedConversation.js";
import { TEST_REDIS_URL } from "../helpers/redisTestPrefix.js";
import { startServiceHarness, type ServiceHarness } from "../helpers/serviceHarness.js";
import { waitUntil } from "../helpers/waitUntil.js";

/**
 * Kills every connection of this test's deployment (its API and workers, found
 * by the prefix in their connection names, and BullMQ's blocking connections,
 * which BullMQ names `<prefix>:<queue>`) from a separate connection, the way
 * `CLIENT KILL TYPE normal` would, without disturbing other tests sharing the
 * Redis. Returns how many were killed.
 */
async function killDeploymentConnections(admin: Redis, prefix: string): Promise<number> {
  const clients = String(await admin.client("LIST"))
    .split("\n")
    .map((line) => Object.fromEntries(line.split(" ").map((field) => field.split("=") as [string, string])))
    .filter((client) => (client.name ?? "").endsWith(`@${prefix}`) || (client.name ?? "").startsWith(`${prefix}:`));
  for (const client of clients) await admin.client("KILL", "ID", client.id!).catch(() => 0);
  return clients.length;
}

let h: ServiceHarness;
let admin: Redis;
beforeAll(async () => {
  // Slow summaries, so the kills land while jobs are active.
  h = await startServiceHarness("redis-kill", { workers: 2, script: () => ({ kind: "reply", delayMs: 60 }) });
  admin = new Redis(TEST_REDIS_URL);
});
afterAll(async () => {
  admin.disconnect();
  await h.close();
});

describe("Redis connections killed mid-run", () => {
  it("are re-established by the API and the workers, and no job or callback is lost", async () => {
    const ids: string[] = [];
    const submitSome = async (count: number, from: number): Promise<void> => {
      for (let i = from; i < from + count; i++) {
        const { status, body } = await h.submit(
          markedRequest(`kill-${i}`, { conversationId: `conv-${i}`, callbackUrl: h.receiver.url(`/kill/${i}`) }),
        );
        expect(status).toBe(202);
        ids.push(String(body.id));
      }
    };
    await submitSome(10, 0);
    await waitUntil(() => h.fake.requests.length > 0, "the workers are summarizing");
    let killed = 0;
    for (let round = 0; round < 3; round++) {
      killed += await killDeploymentConnections(admin, h.config.queuePrefix);
      // The API keeps taking work between and right after the kills.
      await submitSome(2, 10 + round * 2);
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
    expect(killed).toBeGreaterThan(3 * 10);

    for (const id of ids) expect((await h.view(id, 30)).status, id).toBe("completed");
    await waitUntil(
      () => ids.every((id) => h.receiver.received.some((callback) => callback.body.includes(id))),
      "every callback arrives",
      30_000,
    );
    const ready = await h.app.inject({ method: "GET", url: "/readyz" });
    expect(ready.statusCode).toBe(200);
    for (const worker of h.workers) expect(worker.consuming()).toBe(true);
  }, 90_000);
});
