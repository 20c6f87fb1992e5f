import { describe, expect, it } from "vitest";
import { parseRetryAfter, retryDelayMs } from "../../src/client/retryPolicy.js";

const policy = { maxRetries: 3, maxDelayMs: 10_000 };
const now = Date.parse("2026-11-30T12:00:00Z");

describe("retryDelayMs", () => {
  it("waits exactly as long as Retry-After asks, in seconds or as a date", () => {
    expect(retryDelayMs(policy, 0, "2", now)).toBe(2_000);
    expect(retryDelayMs(policy, 0, "Mon, 30 Nov 2026 12:00:05 GMT", now)).toBe(5_000);
  });

  it("does not retry when Retry-After asks for longer than the policy allows", () => {
    expect(retryDelayMs(policy, 0, "11", now)).toBeUndefined();
  });

  it("backs off within bounds without a Retry-After, and stops after the last retry", () => {
    for (let retry = 0; retry < 3; retry++) {
      const delay = retryDelayMs(policy, retry, null, now)!;
      expect(delay).toBeGreaterThanOrEqual((250 * 2 ** retry) / 2);
      expect(delay).toBeLessThanOrEqual(250 * 2 ** retry);
    }
    expect(retryDelayMs(policy, 3, null, now)).toBeUndefined();
    expect(retryDelayMs(policy, 3, "1", now)).toBeUndefined();
  });

  it("falls back to its own backoff when Retry-After is neither seconds nor a date", () => {
    expect(parseRetryAfter("soon", now)).toBeUndefined();
    expect(retryDelayMs(policy, 0, "soon", now)).toBeLessThanOrEqual(250);
  });
});
