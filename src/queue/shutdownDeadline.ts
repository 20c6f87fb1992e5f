/**
 * A process's shutdown against one deadline, `COMPACTD_SHUTDOWN_TIMEOUT_MS`
 * from the moment it begins. One per process, not per part: `compactd dev`
 * closes its API and then its worker, and each with a deadline of its own
 * would make the process take twice the timeout.
 *
 * Why: a close step waits on its peer, and a peer can be gone for good. A
 * Redis whose host vanished or whose network was cut leaves its connections
 * open: `QUIT` and BullMQ's closing commands wait for answers that never
 * come, and the pod would hang until Kubernetes SIGKILLs it, with nobody
 * saying why. So every step (HTTP server, workers, queues, each Redis
 * connection) runs here: what has not closed by the deadline is dropped
 * (`force`: a connection's `disconnect()`) and named, so the process can exit
 * and say what it abandoned.
 *
 * Steps that start at or after the deadline share {@link GRACE_MS} more: a
 * healthy Redis answers `QUIT` in a round trip, and a close that spent the
 * deadline on its HTTP requests must not make every later step fail. So the
 * whole shutdown ends about the grace past the timeout, whatever is gone,
 * plus what dropping connections takes (each drop is bounded by the grace too).
 */
import { settlesWithin } from "../core/settleWithin.js";

/** What steps begun past the deadline get, together; also how long a `force` may take. */
const GRACE_MS = 1_000;

export interface ShutdownDeadline {
  /** Starts the clock (the first call does; later ones change nothing). Every step starts it too. */
  begin(): void;
  /**
   * The wall-clock time the deadline ends (starting the clock if need be): a
   * part closing after another, under the same deadline, plans its steps by
   * what is left rather than by the whole timeout.
   */
  endsAt(): number;
  /**
   * Waits for `closing` until the deadline (begun past it, until the grace
   * after it ends). If it has not settled by then, calls `force` (waiting for
   * it at most the grace), records `name` as abandoned and answers false. A
   * rejected `closing` counts as closed: the connection it closed is gone
   * either way.
   */
  step(name: string, closing: Promise<unknown>, force?: () => unknown): Promise<boolean>;
  /** The steps abandoned so far, in the order they were. */
  abandoned(): readonly string[];
  /**
   * The same deadline for one part of a process running several (`dev`'s API
   * and worker): its steps are recorded as `label: name`. Both parts close
   * steps of the same names (each has its "Redis connection (commands)"), and
   * the one line saying what was abandoned must tell whose each was.
   */
  part(label: string): ShutdownDeadline;
}

export function shutdownDeadline(timeoutMs: number): ShutdownDeadline {
  let deadline: number | undefined;
  const abandoned: string[] = [];
  const endsAt = (): number => (deadline ??= Date.now() + timeoutMs);
  const labelled = (prefix: string): ShutdownDeadline => ({
    begin: () => void endsAt(),
    endsAt,
    async step(name, closing, force) {
      const end = Date.now() < endsAt() ? endsAt() : endsAt() + GRACE_MS;
      if (await settlesWithin(closing, end - Date.now())) return true;
      abandoned.push(`${prefix}${name}`);
      if (force !== undefined) await settlesWithin(Promise.resolve().then(force), GRACE_MS);
      return false;
    },
    abandoned: () => [...abandoned],
    part: (label) => labelled(`${prefix}${label}: `),
  });
  return labelled("");
}
