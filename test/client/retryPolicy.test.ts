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

  it("takes for a date only an HTTP-date, not whatever Date.parse makes of a number", () => {
    // V8 reads "1.5" as 5 January 2001 and "5, 5" (two Retry-After headers joined) as 5 May 2001: long past, so "retry now".
    for (const value of ["1.5", "5, 5", "-1", "2026-11-30"]) expect(parseRetryAfter(value, now), value).toBeUndefined();
    expect(retryDelayMs(policy, 0, "5, 5", now)).toBeGreaterThan(0);
  });

  it("reads each of the three HTTP-date forms as GMT, whatever the local time zone", () => {
    const zone = process.env.TZ;
    process.env.TZ = "America/New_York";
    try {
      expect(parseRetryAfter("Mon, 30 Nov 2026 12:00:05 GMT", now)).toBe(5_000);
      expect(parseRetryAfter("Monday, 30-Nov-26 12:00:05 GMT", now)).toBe(5_000);
      // asctime carries no zone; HTTP dates are always GMT.
      expect(parseRetryAfter("Mon Nov 30 12:00:05 2026", now)).toBe(5_000);
    } finally {
      if (zone === undefined) delete process.env.TZ;
      else process.env.TZ = zone;
    }
  });
});
