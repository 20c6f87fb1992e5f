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
 */

export interface ReceiverSlot {
  /** Frees the slot; `slow` says whether the delivery timed out or took over half the timeout. */
  release(slow: boolean): void;
}

export interface ReceiverSlots {
  /** Whether `receiver` holds its whole share now: a callback to it would find no slot. */
  isFull(receiver: string): boolean;
  /** A slot for `receiver`, or undefined when it holds its whole share. */
  tryAcquire(receiver: string): ReceiverSlot | undefined;
  /**
   * How long to defer a callback to `receiver` that found no free slot, in
   * ms, when it has been deferred `timesDeferred` times before.
   */
  deferralMs(receiver: string, timesDeferred: number): number;
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

export function createReceiverSlots(perReceiver: number, timeoutMs: number): ReceiverSlots {
  /** Start times (ms) of each receiver's deliveries in flight. */
  const inFlight = new Map<string, Set<number>>();
  const slow = new Set<string>();
  const isSlow = (receiver: string): boolean => {
    if (slow.has(receiver)) return true;
    const now = performance.now();
    for (const started of inFlight.get(receiver) ?? []) if (now - started > SLOW_DELIVERY_MS) return true;
    return false;
  };
  return {
    isFull(receiver) {
      return (inFlight.get(receiver)?.size ?? 0) >= perReceiver;
    },
    tryAcquire(receiver) {
      const held = inFlight.get(receiver) ?? new Set<number>();
      if (held.size >= perReceiver) return undefined;
      // A unique entry even for two deliveries started in the same instant.
      let started = performance.now();
      while (held.has(started)) started += 1e-6;
      inFlight.set(receiver, held.add(started));
      let released = false;
      return {
        release(wasSlow) {
          if (released) return;
          released = true;
          held.delete(started);
          if (held.size === 0) inFlight.delete(receiver);
          if (wasSlow) slow.add(receiver);
          else slow.delete(receiver);
        },
      };
    },
    deferralMs(receiver, timesDeferred) {
      const base = isSlow(receiver) ? Math.min(timeoutMs, MAX_DEFERRAL_MS) : FAST_DEFERRAL_MS;
      const backedOff = Math.min(MAX_DEFERRAL_MS, base * 2 ** Math.min(Math.max(timesDeferred, 0), MAX_DOUBLINGS));
      // Jittered, so deferred callbacks do not all come back together.
      return Math.round(backedOff * (0.5 + Math.random()));
    },
  };
}

/** The receiver a callback URL names: its host and port, the unit that is slow or down. */
export function receiverOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}
