/**
 * How long a callback receiver may have taken, as a worker can tell it.
 *
 * A worker's event loop runs every compaction it holds, and at hundreds in
 * flight it is busy for a tenth of a second and more at a stretch
 * (docs/OPERATIONS.md, "Event-loop delay"). An answer that arrives meanwhile
 * is read only once the loop is free, so the time a delivery took, as the
 * loop observes it, includes the loop's own lateness. Judging receivers by
 * it made a receiver that answered at once look slow: one worker at 200 in
 * flight sent every callback through the queue after a burst and received
 * 20 callbacks a second while it finished 53 jobs (docs/BENCHMARKS.md,
 * Service). So a receiver is judged by the time elapsed less the time this
 * thread's loop spent running other work meanwhile
 * (`eventLoopUtilization`): the least the receiver can have taken. Only an
 * answer is judged so. A timeout is counted whole, and a delivery still in
 * flight is judged by its whole age (receiverSlots.ts): no answer has been
 * read, and discounting would put off noticing a receiver that hangs by as
 * long as the loop is busy.
 */
import { performance } from "node:perf_hooks";

export interface ReceiverClock {
  /** Milliseconds since the clock started. */
  elapsedMs(): number;
  /** {@link elapsedMs} less the milliseconds this thread's event loop was busy meanwhile; never negative. */
  receiverMs(): number;
}

export function startReceiverClock(): ReceiverClock {
  const started = performance.now();
  const loopBefore = performance.eventLoopUtilization();
  const elapsedMs = (): number => performance.now() - started;
  return {
    elapsedMs,
    receiverMs: () => Math.max(0, elapsedMs() - performance.eventLoopUtilization(loopBefore).active),
  };
}
