import { randomBytes } from "node:crypto";
import type { Cluster, Redis } from "ioredis";
import { settleWithin, settlesWithin } from "../core/settleWithin.js";

/**
 * A Redis lease naming one process of the deployment its leader for a chore
 * every replica could do but only one should (exporting queue sizes).
 *
 * `SET key id NX PX ttl` takes a free lease; the holder renews it at a third of
 * the ttl with a compare-and-extend script, so it survives a missed renewal.
 * A crashed leader's lease lapses after `ttlMs` and the next tick of another
 * process takes it; a closing leader deletes it so the handover is immediate.
 * It is not a lock for correctness: a leader whose event loop stalls past the
 * ttl may briefly overlap with its successor, which for a gauge means a scrape
 * counted twice, not lost work.
 */
export interface LeaderLease {
  isLeader(): boolean;
  /** Stops renewing and hands the lease back so another process takes over at once. */
  close(): Promise<void>;
}

export interface LeaderLeaseOptions {
  readonly redis: Redis | Cluster;
  readonly key: string;
  readonly ttlMs: number;
  /** Called with the new state whenever this process gains or loses the lease. */
  readonly onChange?: (leader: boolean) => void;
}

const RENEW = `if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("pexpire", KEYS[1], ARGV[2]) else return 0 end`;
const RELEASE = `if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) else return 0 end`;

export function startLeaderLease({ redis, key, ttlMs, onChange }: LeaderLeaseOptions): LeaderLease {
  const id = randomBytes(12).toString("hex");
  const period = Math.max(1, Math.floor(ttlMs / 3));
  let leader = false;
  let closed = false;
  let ticking = false;

  const become = (next: boolean): void => {
    if (next === leader) return;
    leader = next;
    onChange?.(next);
  };

  const tick = async (): Promise<void> => {
    const command = leader
      ? redis.eval(RENEW, 1, key, id, String(ttlMs)).then((renewed) => renewed === 1)
      : redis.set(key, id, "PX", ttlMs, "NX").then((reply) => reply === "OK");
    // A worker's Redis connection queues commands for as long as Redis is
    // away (BullMQ needs that), so an answer later than a period counts as
    // none. Without an answer we cannot know whether we still hold the lease;
    // stepping down risks a gap in the gauge, staying up a double count.
    const held = await settleWithin(command.catch(() => false), period);
    if (!closed) become(held === true);
  };

  const run = (): void => {
    if (ticking) return;
    ticking = true;
    void tick().finally(() => {
      ticking = false;
    });
  };
  run();
  const timer = setInterval(run, period);
  timer.unref();

  return {
    isLeader: () => leader,
    async close() {
      if (closed) return;
      closed = true;
      clearInterval(timer);
      const wasLeader = leader;
      become(false);
      if (wasLeader) await settlesWithin(redis.eval(RELEASE, 1, key, id), period);
    },
  };
}
