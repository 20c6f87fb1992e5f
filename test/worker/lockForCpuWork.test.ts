import { describe, expect, it } from "vitest";
import { lockForCpuWork } from "../../src/worker/lockForCpuWork.js";

const MIB = 1024 * 1024;

describe("lockForCpuWork", () => {
  it("leaves an ordinary conversation's lock to BullMQ's renewal: no extension, no Redis call", () => {
    expect(lockForCpuWork(100_000, 10_000)).toBeUndefined();
    expect(lockForCpuWork(600_000, 10_000)).toBeUndefined();
  });

  it("extends the lock by a budget that grows with the conversation once it outgrows an eighth of the lock", () => {
    expect(lockForCpuWork(MIB, 10_000)).toBe(12_000);
    expect(lockForCpuWork(20 * MIB, 600)).toBe(40_600);
    // The same 100 KB needs an extension under a lock short enough that the budget matters.
    expect(lockForCpuWork(100_000, 1_000)).toBe(1_191);
  });

  it("bounds the extension however large the conversation", () => {
    expect(lockForCpuWork(10_000 * MIB, 10_000)).toBe(10_000 + 5 * 60_000);
  });
});
