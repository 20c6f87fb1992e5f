import { describe, expect, it } from "vitest";
import { isJobId, jobIdInShard, newJobId, newJobSeed, shardFor, shardOfJobId } from "../../src/queue/compactionJob.js";
import { serviceKeys, shardPrefix } from "../../src/queue/queueNames.js";

describe("queue shards", () => {
  it("put shard n under its own hash tag and keep shard 0 at the prefix itself", () => {
    expect(shardPrefix("{compactd}", 0)).toBe("{compactd}");
    expect(shardPrefix("{compactd}", 2)).toBe("{compactd-2}");
    expect(shardPrefix("app:{compactd}:q", 3)).toBe("app:{compactd-3}:q");
    expect(shardPrefix("compactd", 1)).toBe("compactd-1");
  });

  it("name a job's shard in its id, which stays a job id", () => {
    for (const shard of [0, 1, 17, 63]) {
      const id = newJobId(shard);
      expect(isJobId(id)).toBe(true);
      expect(shardOfJobId(id)).toBe(shard);
    }
    expect(shardOfJobId("not-a-job")).toBe(0);
  });

  it("send every job of a conversation to one shard, and spread jobs without one", () => {
    const shards = 4;
    const ofConversation = new Set(Array.from({ length: 20 }, () => shardFor("acme", "conv-1", newJobSeed(), shards)));
    expect(ofConversation.size).toBe(1);
    const spread = new Set(Array.from({ length: 200 }, () => shardFor("acme", undefined, newJobSeed(), shards)));
    expect([...spread].sort()).toEqual([0, 1, 2, 3]);
    const conversations = new Set(Array.from({ length: 200 }, (_, i) => shardFor("acme", `conv-${i}`, "", shards)));
    expect([...conversations].sort()).toEqual([0, 1, 2, 3]);
  });

  it("keep a job's own records in its shard's slot and the deployment's records at the prefix", () => {
    const keys = serviceKeys("{compactd}");
    const id = jobIdInShard(newJobSeed(), 2);
    expect(keys.result(id)).toBe(`{compactd-2}:store:result:${id}`);
    expect(keys.cancelled(id)).toBe(`{compactd-2}:store:cancelled:${id}`);
    expect(keys.tombstone(id)).toBe(`{compactd-2}:store:tombstone:${id}`);
    expect(keys.batch("bat_1")).toBe("{compactd}:store:batch:bat_1");
  });
});
