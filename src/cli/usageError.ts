/**
 * A problem with how the CLI was called or with the input it was given:
 * reported as one line on stderr with exit code 2, never as a stack trace.
 */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

export const EXIT = {
  compacted: 0,
  failed: 1,
  usage: 2,
  nothingToCompact: 3,
  /** The reader of stdout went away: what a shell reports for a process killed by SIGPIPE (128 + signal 13); see commandOutput.ts. */
  readerGone: 141,
} as const;
