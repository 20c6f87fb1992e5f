import { describe, expect, it } from "vitest";
import { callbackAttempts, callbackRetryDelay, type CallbackRetryPolicy } from "../../src/webhooks/retrySchedule.js";

const DAY: CallbackRetryPolicy = { backoffMs: 5_000, maxBackoffMs: 3_600_000, maxAgeMs: 24 * 3_600_000 };

function nominalTotal(attempts: number, policy: CallbackRetryPolicy): number {
  let total = 0;
  for (let made = 1; made < attempts; made++) total += callbackRetryDelay(made, policy, () => 0);
  return total;
}

describe("callbackRetryDelay", () => {
  it("doubles from the first backoff and stops growing at the cap", () => {
    const delays = [1, 2, 3, 10, 11, 12, 40].map((made) => callbackRetryDelay(made, DAY, () => 0));
    expect(delays).toEqual([5_000, 10_000, 20_000, 2_560_000, 3_600_000, 3_600_000, 3_600_000]);
  });

  it("spreads retries by shortening delays, never lengthening them", () => {
    expect(callbackRetryDelay(2, DAY, () => 0.999)).toBeGreaterThanOrEqual(8_000);
    expect(callbackRetryDelay(2, DAY, () => 0.999)).toBeLessThan(10_000);
    expect(callbackRetryDelay(2, DAY, () => 0)).toBe(10_000);
  });
});

describe("callbackAttempts", () => {
  it("fits as many attempts as the default day allows, the last within it", () => {
    const attempts = callbackAttempts(DAY);
    expect(attempts).toBe(33);
    expect(nominalTotal(attempts, DAY)).toBeLessThanOrEqual(DAY.maxAgeMs);
    expect(nominalTotal(attempts + 1, DAY)).toBeGreaterThan(DAY.maxAgeMs);
  });

  it("gives a callback at least one attempt when its age is shorter than the first delay", () => {
    expect(callbackAttempts({ backoffMs: 5_000, maxBackoffMs: 5_000, maxAgeMs: 1_000 })).toBe(1);
  });

  it("counts attempts of tiny delays over a long age without walking every one", () => {
    const policy = { backoffMs: 1, maxBackoffMs: 1, maxAgeMs: 10 * 24 * 3_600_000 };
    expect(callbackAttempts(policy)).toBe(10 * 24 * 3_600_000 + 1);
  });

  it("keeps every schedule within its age", () => {
    for (const backoffMs of [1, 7, 50, 1_000]) {
      for (const maxBackoffMs of [backoffMs, backoffMs * 3, 200, 60_000].filter((cap) => cap >= backoffMs)) {
        for (const maxAgeMs of [0, 1, 149, 150, 151, 10_000, 3_600_000]) {
          const policy = { backoffMs, maxBackoffMs, maxAgeMs };
          const attempts = callbackAttempts(policy);
          expect(nominalTotal(attempts, policy)).toBeLessThanOrEqual(maxAgeMs);
          expect(nominalTotal(attempts + 1, policy)).toBeGreaterThan(maxAgeMs);
        }
      }
    }
  });
});
