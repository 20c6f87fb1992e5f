import { Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import { type LeaderLease, startLeaderLease } from "../../src/metrics/leaderLease.js";
import { deleteKeysUnder, TEST_REDIS_URL, testPrefix } from "../helpers/redisTestPrefix.js";
import { waitUntil } from "../helpers/waitUntil.js";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function connection(): Redis {
  const redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
  cleanups.push(async () => redis.disconnect());
  return redis;
}

function leases(count: number, key: string, ttlMs: number): { lease: LeaderLease; redis: Redis }[] {
  return Array.from({ length: count }, () => {
    const redis = connection();
    const lease = startLeaderLease({ redis, key, ttlMs });
    cleanups.push(() => lease.close());
    return { lease, redis };
  });
}

describe("startLeaderLease", () => {
  it("makes exactly one of several processes the leader", async () => {
    const prefix = testPrefix("lease-one");
    cleanups.push(() => deleteKeysUnder(prefix));
    const all = leases(3, `${prefix}:leader`, 3_000);
    await waitUntil(() => all.some(({ lease }) => lease.isLeader()), "someone leads");
    await new Promise((resolve) => setTimeout(resolve, 1_200)); // through a few renewals
    expect(all.filter(({ lease }) => lease.isLeader())).toHaveLength(1);
  });

  it("hands over at once when the leader closes", async () => {
    const prefix = testPrefix("lease-close");
    cleanups.push(() => deleteKeysUnder(prefix));
    const [first, second] = leases(2, `${prefix}:leader`, 9_000);
    await waitUntil(() => first!.lease.isLeader() || second!.lease.isLeader(), "someone leads");
    const [leader, follower] = first!.lease.isLeader() ? [first!, second!] : [second!, first!];
    await leader.lease.close();
    expect(leader.lease.isLeader()).toBe(false);
    // Released, not left to expire: the key is gone well before its 9 s ttl.
    expect(await follower.redis.exists(`${prefix}:leader`)).toBe(0);
    await waitUntil(() => follower.lease.isLeader(), "the follower takes over", 15_000);
  });

  it("lets another process take over after the leader loses Redis, once the lease lapses", async () => {
    const prefix = testPrefix("lease-crash");
    cleanups.push(() => deleteKeysUnder(prefix));
    const [first, second] = leases(2, `${prefix}:leader`, 600);
    await waitUntil(() => first!.lease.isLeader() || second!.lease.isLeader(), "someone leads");
    const [leader, follower] = first!.lease.isLeader() ? [first!, second!] : [second!, first!];
    leader.redis.disconnect(); // its renewals now fail: it must step down
    await waitUntil(() => !leader.lease.isLeader(), "the cut-off leader steps down");
    await waitUntil(() => follower.lease.isLeader(), "the follower takes over");
  });
});
