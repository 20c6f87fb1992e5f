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

/**
 * The line that reports a usage error on stderr: the same for compactd's
 * own refusals and Commander's (an unknown option, a missing argument), so a
 * user or a script reading stderr sees one form. `help` names the command
 * whose `--help` lists what the command line can hold.
 */
export function usageLine(message: string, help?: string): string {
  return `compactd: ${message}${help === undefined ? "" : ` (see ${help} --help)`}\n`;
}

export const EXIT = {
  compacted: 0,
  failed: 1,
  usage: 2,
  nothingToCompact: 3,
  /** The reader of stdout went away: what a shell reports for a process killed by SIGPIPE (128 + signal 13); see commandOutput.ts. */
  readerGone: 141,
} as const;
