/**
 * A receiver's share of a worker's delivery slots, and the short line of
 * callbacks that wait in the process for its next free slot.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { createReceiverSlots, type ReceiverSlot } from "../../src/webhooks/receiverSlots.js";

afterEach(() => {
  vi.useRealTimers();
});

const TIMEOUT_MS = 10_000;

describe("receiver slots", () => {
  it("hand a released slot to the callback waiting longest, before any newcomer", async () => {
    const slots = createReceiverSlots(5, TIMEOUT_MS);
    const held = await Promise.all(Array.from({ length: 5 }, () => slots.acquire("hooks.example:443")));
    expect(held.every((slot) => slot !== undefined)).toBe(true);
    const first = slots.acquire("hooks.example:443");
    const order: string[] = [];
    void first.then(() => order.push("first"));
    held[0]!.release(5);
    // A newcomer finds the receiver still full: the freed slot went to the waiter.
    expect(slots.mayQueue("hooks.example:443")).toBe(true);
    expect(await first).toBeDefined();
    expect(order).toEqual(["first"]);
    // Another receiver is not affected by this one's line.
    expect(await slots.acquire("other.example:443")).toBeDefined();
  });

  it("keep the line short: one waiter for every five slots of the share, at least one", async () => {
    const slots = createReceiverSlots(10, TIMEOUT_MS);
    for (let i = 0; i < 10; i++) await slots.acquire("r");
    const waiters = [slots.acquire("r"), slots.acquire("r")];
    expect(slots.mayQueue("r")).toBe(false);
    expect(await slots.acquire("r")).toBeUndefined();
    void waiters;

    const small = createReceiverSlots(1, TIMEOUT_MS);
    await small.acquire("r");
    expect(small.mayQueue("r")).toBe(true);
    void small.acquire("r");
    expect(small.mayQueue("r")).toBe(false);
  });

  it("let a waiter go back to the queue when no slot frees within a second", async () => {
    vi.useFakeTimers();
    const slots = createReceiverSlots(1, TIMEOUT_MS);
    const only = await slots.acquire("r");
    const waiter = slots.acquire("r");
    await vi.advanceTimersByTimeAsync(1_001);
    expect(await waiter).toBeUndefined();
    // The waiter left the line: the slot released next is free for anyone, not handed to it.
    only!.release(5);
    expect(slots.mayQueue("r")).toBe(true);
    expect(await slots.acquire("r")).toBeDefined();
  });

  it("let no callback wait for a slow receiver", async () => {
    vi.useFakeTimers();
    const slots = createReceiverSlots(1, TIMEOUT_MS);
    await slots.acquire("r");
    // A delivery in flight for over a second marks the receiver slow.
    await vi.advanceTimersByTimeAsync(1_500);
    expect(slots.mayQueue("r")).toBe(false);
    expect(await slots.acquire("r")).toBeUndefined();
  });

  it("give a first delivery a slot only while the receiver answered its last within a second", async () => {
    vi.useFakeTimers();
    const slots = createReceiverSlots(2, TIMEOUT_MS);
    const first = await slots.takeForFirstDelivery("r");
    expect(first).toBeDefined();
    // A delivery running past a second makes the receiver slow for first deliveries, free slot or not.
    await vi.advanceTimersByTimeAsync(1_500);
    expect(await slots.takeForFirstDelivery("r")).toBeUndefined();
    // It took 1.5 s: still none, until a delivery (a queued one) answers within the second.
    first!.release(1_500);
    expect(await slots.takeForFirstDelivery("r")).toBeUndefined();
    (await slots.acquire("r"))!.release(40);
    expect(await slots.takeForFirstDelivery("r")).toBeDefined();
  });

  it("let a first delivery to a quick receiver holding its whole share wait a second at most for the next slot", async () => {
    vi.useFakeTimers();
    const slots = createReceiverSlots(2, TIMEOUT_MS);
    const held = [(await slots.takeForFirstDelivery("r"))!, (await slots.takeForFirstDelivery("r"))!];
    let waited: ReceiverSlot | undefined | "pending" = "pending";
    void slots.takeForFirstDelivery("r").then((slot) => (waited = slot));
    await vi.advanceTimersByTimeAsync(300);
    expect(waited).toBe("pending");
    // The slot released goes to it at once.
    held[0]!.release(300);
    await vi.advanceTimersByTimeAsync(0);
    expect(waited).toBeDefined();
    expect(waited).not.toBe("pending");
    // None released within the second: none, and the callback goes to the queue.
    let late: ReceiverSlot | undefined | "pending" = "pending";
    void slots.takeForFirstDelivery("r").then((slot) => (late = slot));
    await vi.advanceTimersByTimeAsync(999);
    expect(late).toBe("pending");
    await vi.advanceTimersByTimeAsync(1);
    expect(late).toBeUndefined();
  });
});
