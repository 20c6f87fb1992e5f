/**
 * Each receiver's share of a worker's delivery slots.
 *
 * All callbacks share one BullMQ queue and each worker delivers
 * `COMPACTD_CALLBACK_CONCURRENCY` at once. Without a limit per receiver, a
 * receiver that never answers fills every slot with deliveries that each
 * wait out the callback timeout, and every other tenant's callbacks queue
 * behind it: 600 callbacks to one hanging host delayed a healthy host's by
 * 50 s. So a delivery first takes a slot of its receiver (the URL's host and
 * port): a receiver holds at most `COMPACTD_CALLBACK_HOST_CONCURRENCY` of a
 * worker's slots, and a callback whose receiver has none free goes back to
 * the queue as a delayed job (BullMQ's `moveToDelayed` + `DelayedError`,
 * which costs no attempt) instead of occupying a slot while it waits.
 *
 * Why this rather than another BullMQ primitive: a queue per receiver would
 * need workers to discover queues created at run time; BullMQ's rate limiter
 * is per queue, so limiting the hanging receiver would limit everyone; groups
 * with per-group concurrency exist only in BullMQ Pro. A guard per worker
 * needs no coordination and bounds the share per worker, hence per
 * deployment (every worker holds the same share).
 *
 * A receiver whose deliveries are slow (one is taking over a second, or the
 * last took over half the timeout) has its surplus deferred for longer, so
 * hundreds of callbacks to a hanging host cycle through the queue once every
 * few seconds, not constantly; and a callback deferred again backs off, so
 * those behind a receiver that is merely busy do not cycle constantly either.
 *
 * The first delivery of a callback is made by the worker that settles its
 * job, before the job is let go (firstDelivery.ts), and takes a slot here
 * too, so both paths together hold a receiver to its share. It goes only to
 * a receiver that answered its last callback within
 * {@link FIRST_DELIVERY_TIMEOUT_MS}: meanwhile it holds a compaction job, so
 * a receiver that is slow, or was the last time, is left to the queue. When
 * such a quick receiver holds its whole share, the first delivery waits in
 * line for the next slot released, up to {@link SLOT_WAIT_MS}, rather than
 * go to the queue at once. A worker's own lateness (its event loop busy with
 * its other compactions) keeps a quick receiver's slots held for tenths of a
 * second; queued, each such callback cost a second BullMQ job and then
 * waited out deferrals while slots fell free, and with two workers on two
 * cores that had half a core taken away the callbacks fell 20-45 a second
 * behind the jobs finished. Waiting, they kept up, the jobs finishing as
 * fast (docs/BENCHMARKS.md, Service).
 */

export interface ReceiverSlot {
  /** Frees the slot, telling how long its delivery took (a timeout included), in ms. */
  release(durationMs: number): void;
}

export interface ReceiverSlots {
  /**
   * Whether a callback to `receiver` may have a slot now or wait here for
   * one: false when the receiver holds its whole share and either its
   * waiting line is full or it is slow. Such a callback goes back to the
   * queue at once, without reading its result.
   */
  mayQueue(receiver: string): boolean;
  /**
   * A slot for `receiver`: at once when one is free, else the next one
   * released, if that comes within {@link SLOT_WAIT_MS} and
   * {@link mayQueue} allows the wait; undefined otherwise.
   */
  acquire(receiver: string): Promise<ReceiverSlot | undefined>;
  /**
   * How long to defer a callback to `receiver` that found no free slot, in
   * ms, when it has been deferred `timesDeferred` times before.
   */
  deferralMs(receiver: string, timesDeferred: number): number;
  /**
   * A slot for a callback's first delivery to `receiver`, when the receiver
   * answered its last delivery within {@link FIRST_DELIVERY_TIMEOUT_MS} and
   * has none running longer: at once when one is free, else the next one
   * released within {@link SLOT_WAIT_MS} (in the same line as the callbacks
   * {@link acquire} holds); undefined otherwise, and the callback goes to
   * the queue.
   */
  takeForFirstDelivery(receiver: string): Promise<ReceiverSlot | undefined>;
}

/** Deferral for a receiver that answers quickly: its slot is likely free again soon. */
const FAST_DEFERRAL_MS = 250;

/** The longest deferral, so a receiver that recovers is served again within it. */
const MAX_DEFERRAL_MS = 5_000;

/**
 * A callback deferred again waits twice as long as the last time, twice at
 * most (a second, for a receiver that is not slow). Deferred at a fixed
 * quarter of a second, every callback queued behind a receiver that answers,
 * but not as fast as they come, came back four times a second, each time a
 * fetch from the queue and a move back to it: with two workers overfed on
 * two cores (`npm run bench:service`'s two-worker scenario), hundreds waited
 * and those round trips took more CPU than the compactions (up to 125 ms a
 * job against 23), so fewer results were delivered the more arrived. Backing
 * off further (five doublings) cut that churn more but left the receiver's
 * slots idle while its callbacks waited out their deferrals: one worker
 * delivered 14-23% fewer a second.
 */
const MAX_DOUBLINGS = 2;

/** A delivery running this long marks its receiver slow: an answer is not coming soon. */
const SLOW_DELIVERY_MS = 1_000;

/**
 * How long a first delivery may take (firstDelivery.ts): as long as a
 * delivery may run before its receiver counts as slow. Its compaction job
 * is held meanwhile, so a receiver that takes longer is cut off once and
 * then served from the queue, with the whole callback timeout, until it
 * answers within this again.
 */
export const FIRST_DELIVERY_TIMEOUT_MS = SLOW_DELIVERY_MS;

/**
 * How long a callback waits here for its busy receiver's next free slot
 * before going back to the queue. A slot freed while every callback to its
 * receiver was out waiting a deferral stayed idle until one came back;
 * a few waiting here take it the moment it is released. A receiver that
 * answers at all frees one well within this.
 */
const SLOT_WAIT_MS = 1_000;

/**
 * At most one callback waits here for every this many slots of a
 * receiver's share (at least one). Waiting, a callback holds one of the
 * worker's delivery slots, so the line stays short: a receiver holding its
 * 25 of 50 slots and 5 waiting leave 20 for everyone else.
 */
const SLOTS_PER_WAITER = 5;

interface Waiter {
  readonly take: (slot: ReceiverSlot | undefined) => void;
}

export function createReceiverSlots(perReceiver: number, timeoutMs: number): ReceiverSlots {
  /** Start times (ms) of each receiver's deliveries in flight. */
  const inFlight = new Map<string, Set<number>>();
  /** Receivers whose last delivery took over half the timeout. */
  const slow = new Set<string>();
  /** Receivers whose last delivery took over {@link FIRST_DELIVERY_TIMEOUT_MS}. */
  const notQuick = new Set<string>();
  const isSlow = (receiver: string): boolean => {
    if (slow.has(receiver)) return true;
    const now = performance.now();
    for (const started of inFlight.get(receiver) ?? []) if (now - started > SLOW_DELIVERY_MS) return true;
    return false;
  };
  const maxWaiters = Math.max(1, Math.floor(perReceiver / SLOTS_PER_WAITER));
  /** Each receiver's callbacks waiting here for a slot, first come first served. */
  const waiting = new Map<string, Waiter[]>();
  const isFull = (receiver: string): boolean => (inFlight.get(receiver)?.size ?? 0) >= perReceiver;

  /** Takes a slot of `receiver`, which must have one free. */
  const take = (receiver: string): ReceiverSlot => {
    const held = inFlight.get(receiver) ?? new Set<number>();
    // A unique entry even for two deliveries started in the same instant.
    let started = performance.now();
    while (held.has(started)) started += 1e-6;
    inFlight.set(receiver, held.add(started));
    let released = false;
    return {
      release(durationMs) {
        if (released) return;
        released = true;
        held.delete(started);
        if (held.size === 0) inFlight.delete(receiver);
        mark(slow, receiver, durationMs > timeoutMs / 2);
        mark(notQuick, receiver, durationMs > FIRST_DELIVERY_TIMEOUT_MS);
        // The freed slot goes straight to the callback waiting longest.
        const next = waiting.get(receiver)?.shift();
        if (next !== undefined) next.take(take(receiver));
      },
    };
  };

  const mayQueue = (receiver: string): boolean =>
    !isFull(receiver) || (!isSlow(receiver) && (waiting.get(receiver)?.length ?? 0) < maxWaiters);

  /** The next slot of `receiver` released within {@link SLOT_WAIT_MS}, first come first served; undefined past it. */
  const nextReleased = (receiver: string): Promise<ReceiverSlot | undefined> => {
    const line = waiting.get(receiver) ?? [];
    waiting.set(receiver, line);
    return new Promise((resolve) => {
      const waiter: Waiter = {
        take: (slot) => {
          clearTimeout(timer);
          if (line.length === 0 && waiting.get(receiver) === line) waiting.delete(receiver);
          resolve(slot);
        },
      };
      const timer = setTimeout(() => {
        const at = line.indexOf(waiter);
        if (at >= 0) line.splice(at, 1);
        waiter.take(undefined);
      }, SLOT_WAIT_MS);
      line.push(waiter);
    });
  };

  return {
    mayQueue,
    acquire(receiver) {
      if (!isFull(receiver)) return Promise.resolve(take(receiver));
      if (!mayQueue(receiver)) return Promise.resolve(undefined);
      return nextReleased(receiver);
    },
    takeForFirstDelivery(receiver) {
      if (notQuick.has(receiver) || isSlow(receiver)) return Promise.resolve(undefined);
      return isFull(receiver) ? nextReleased(receiver) : Promise.resolve(take(receiver));
    },
    deferralMs(receiver, timesDeferred) {
      const base = isSlow(receiver) ? Math.min(timeoutMs, MAX_DEFERRAL_MS) : FAST_DEFERRAL_MS;
      const backedOff = Math.min(MAX_DEFERRAL_MS, base * 2 ** Math.min(Math.max(timesDeferred, 0), MAX_DOUBLINGS));
      // Jittered, so deferred callbacks do not all come back together.
      return Math.round(backedOff * (0.5 + Math.random()));
    },
  };
}

function mark(receivers: Set<string>, receiver: string, marked: boolean): void {
  if (marked) receivers.add(receiver);
  else receivers.delete(receiver);
}

/** The receiver a callback URL names: its host and port, the unit that is slow or down. */
export function receiverOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}
