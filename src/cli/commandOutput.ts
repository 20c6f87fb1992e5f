/**
 * Standard output of a command whose output is its result (`compact`,
 * `demo`, the help and the version; not the services, whose stdout is their
 * log), with a failed write turned into an outcome instead of a crash.
 *
 * Node ignores SIGPIPE and reports a write that cannot be made as an `error`
 * event on stdout, which, unhandled, ends the process with a stack trace:
 * `compactd compact big.json | head -c 200` printed one once `head` had
 * read its fill, and so did a result redirected to a full disk. Two cases:
 * - The reader went away (EPIPE). It asked for no more, so nothing is said;
 *   the exit status is the one a shell reports for a Unix tool stopped by
 *   SIGPIPE (EXIT.readerGone), so a pipeline under `set -o pipefail` still
 *   sees that the output was cut short.
 * - Anything else (ENOSPC, EIO): the result is lost, so one line on stderr
 *   names the failure and the status is a failure's.
 * Either way the command stops: a directory run would otherwise go on
 * summarizing files, paying for model calls whose results no one receives.
 */
import { EXIT } from "./usageError.js";

export class CommandOutput {
  private readonly failed = new AbortController();
  private status: number | undefined;

  constructor(
    private readonly stdout: NodeJS.WritableStream,
    private readonly stderr: NodeJS.WritableStream,
  ) {
    stdout.on("error", (err: NodeJS.ErrnoException) => this.fail(err));
  }

  /** Aborted once a write has failed: nothing more reaches the reader, so the command stops. */
  get stopped(): AbortSignal {
    return this.failed.signal;
  }

  /**
   * The exit status a failed write calls for, or undefined while every write
   * has succeeded. The failure is reported after the write call has returned,
   * possibly after the command has too, so it also sets the process's.
   */
  get exitCode(): number | undefined {
    return this.status;
  }

  write(text: string): void {
    if (!this.failed.signal.aborted) this.stdout.write(text);
  }

  private fail(err: NodeJS.ErrnoException): void {
    if (this.failed.signal.aborted) return;
    if (err.code === "EPIPE") {
      this.status = EXIT.readerGone;
    } else {
      this.status = EXIT.failed;
      this.stderr.write(`compactd: cannot write the result to standard output: ${err.message}\n`);
    }
    process.exitCode = this.status;
    this.failed.abort();
  }
}
