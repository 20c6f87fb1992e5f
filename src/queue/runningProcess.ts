/**
 * What `runApi` and `runWorker` hand back to the CLI, which wires SIGTERM and
 * SIGINT to `close()` and exits 0 once it resolves. Neither installs signal
 * handlers itself, so `compactd dev` can run both in one process and tests
 * can start and stop them at will.
 */
export interface RunningProcess {
  /**
   * Stops taking work, finishes or hands back what is in progress, and
   * releases every connection, within COMPACTD_SHUTDOWN_TIMEOUT_MS
   * (shutdownDeadline.ts). The steps it abandoned at that deadline are
   * recorded by the deadline, which the CLI gives each part and reports from
   * once: `compactd dev` closes two parts under one.
   */
  close(): Promise<void>;
}
