import { describe, expect, it } from "vitest";
import { concurrencyLimit } from "../../src/queue/concurrencyLimit.js";

/** A task that runs until `finish` is called, recording when it started. */
function heldTask(started: number[], index: number): { run: () => Promise<number>; finish: () => void } {
  let finish: () => void = () => undefined;
  const done = new Promise<void>((resolve) => (finish = resolve));
  return {
    run: async () => {
      started.push(index);
      await done;
      return index;
    },
    finish: () => finish(),
  };
}

const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe("a concurrency limit", () => {
  it("runs at most its limit at once, starts the rest in order as places free, and returns each task's value", async () => {
    const limited = concurrencyLimit(3);
    const started: number[] = [];
    const tasks = Array.from({ length: 7 }, (_, i) => heldTask(started, i));
    const results = tasks.map((task) => limited(task.run));
    await settle();
    expect(started).toEqual([0, 1, 2]);

    tasks[1]!.finish();
    await settle();
    expect(started).toEqual([0, 1, 2, 3]);

    tasks[0]!.finish();
    tasks[2]!.finish();
    await settle();
    expect(started).toEqual([0, 1, 2, 3, 4, 5]);

    for (const task of tasks) task.finish();
    expect(await Promise.all(results)).toEqual([0, 1, 2, 3, 4, 5, 6]);
  });

  it("frees the place of a task that fails", async () => {
    const limited = concurrencyLimit(1);
    await expect(limited(() => Promise.reject(new Error("broken")))).rejects.toThrow("broken");
    expect(await limited(() => Promise.resolve("next"))).toBe("next");
  });

  it("refuses a limit that is not a whole number above zero", () => {
    expect(() => concurrencyLimit(0)).toThrow(/whole number > 0/);
    expect(() => concurrencyLimit(1.5)).toThrow(/whole number > 0/);
  });
});
