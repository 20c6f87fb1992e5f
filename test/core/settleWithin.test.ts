import { describe, expect, it } from "vitest";
import { settleWithin, settlesWithin, TIMED_OUT } from "../../src/core/settleWithin.js";

const never = new Promise<never>(() => {});
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const pendingTimers = (): number => process.getActiveResourcesInfo().filter((kind) => kind === "Timeout").length;

describe("settleWithin", () => {
  it("answers what the promise settles to when it settles in time", async () => {
    await expect(settleWithin(Promise.resolve("done"), 1_000)).resolves.toBe("done");
  });

  it("answers TIMED_OUT when the promise has not settled in time", async () => {
    await expect(settleWithin(never, 10)).resolves.toBe(TIMED_OUT);
  });

  it("throws a rejection that comes first", async () => {
    await expect(settleWithin(Promise.reject(new Error("refused")), 1_000)).rejects.toThrow("refused");
  });

  it("leaves no timer behind once the promise has settled", async () => {
    const before = pendingTimers();
    await settleWithin(Promise.resolve(1), 3_600_000);
    await settlesWithin(Promise.reject(new Error("gone")), 3_600_000);
    expect(pendingTimers()).toBe(before);
  });

  it("waits out a time beyond what one Node timer holds instead of giving up at once", async () => {
    // A plain setTimeout of 2^31 ms fires after 1 ms, long before this promise settles.
    await expect(settleWithin(sleep(50).then(() => "settled"), 2 ** 31)).resolves.toBe("settled");
  });
});

describe("settlesWithin", () => {
  it("counts a rejection as settled", async () => {
    await expect(settlesWithin(Promise.reject(new Error("closed badly")), 1_000)).resolves.toBe(true);
  });

  it("answers false when the promise has not settled in time, even past the deadline already", async () => {
    await expect(settlesWithin(never, 10)).resolves.toBe(false);
    await expect(settlesWithin(never, -5)).resolves.toBe(false);
  });
});
