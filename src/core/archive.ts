/**
 * The degraded fallback: a raw archive of the messages instead of a summary.
 *
 * When the summarizer fails twice, the compaction must still shrink the
 * context, or the agent is stuck at the threshold and every round triggers
 * another failing compaction. The archive keeps one clipped line per message,
 * newest first within the summary budget, so the model keeps the recent gist
 * and the context still comes out small. It is marked degraded everywhere it
 * travels (the Result, the checkpoint, metrics) so the coarser memory is never
 * mistaken for a real summary.
 */
import type { Message } from "./message.js";
import { clip, serializeMessage } from "./serialize.js";
import type { TokenEstimator } from "./tokenEstimator.js";

/** Each archived message is clipped to one line of this many characters. */
export const ARCHIVE_LINE_CHARS = 500;

/** The heading that opens an archive; a later archive merges with an earlier one under it. */
export const ARCHIVE_HEADING = "## Raw archive (degraded: no summary could be generated)";

const OMITTED_LINE = /^(\d+) earlier messages omitted\.$/;

export interface ArchiveInput {
  /** The messages to archive, oldest first. */
  readonly messages: readonly Message[];
  /** Messages older than `messages` already left out upstream (not shown to the summarizer). */
  readonly omitted: number;
  /** The previous summary the archive is appended to. */
  readonly previousSummary: string | undefined;
  /**
   * Token budget of the archive lines. The archive never takes more than the
   * messages and earlier archive lines it replaces, so it cannot grow the context.
   */
  readonly budgetTokens: number;
}

/**
 * Builds the archive text. An archive already present in the previous summary
 * is merged rather than nested, and the lines are trimmed together to the
 * budget, so repeated degraded compactions do not grow the summary without end.
 */
export function buildArchive(input: ArchiveInput, estimator: TokenEstimator): string {
  const { prose, lines: earlierLines, omitted: earlierOmitted } = splitArchive(input.previousSummary ?? "");
  const lines = [...earlierLines, ...input.messages.map(archiveLine)];
  let replaced = estimator.sumEstimates(input.messages);
  for (const line of earlierLines) replaced += estimator.estimateText(line);
  // The heading and the omission line are paid for out of the same budget.
  const budget = Math.min(input.budgetTokens, replaced) - estimator.countText(`${ARCHIVE_HEADING}\n${lines.length} earlier messages omitted.`);
  let used = 0;
  let first = lines.length;
  for (let i = lines.length - 1; i >= 0; i--) {
    const cost = estimator.countText(lines[i]!) + 1;
    if (used + cost > budget) break;
    used += cost;
    first = i;
  }
  const omitted = earlierOmitted + input.omitted + first;
  const body = [ARCHIVE_HEADING];
  if (omitted > 0) body.push(`${omitted} earlier messages omitted.`);
  body.push(...lines.slice(first));
  return prose === "" ? body.join("\n") : `${prose}\n\n${body.join("\n")}`;
}

/** One message as one clipped line. */
function archiveLine(message: Message): string {
  return clip(serializeMessage(message).replace(/\s*\n\s*/g, " "), ARCHIVE_LINE_CHARS);
}

function splitArchive(summary: string): { prose: string; lines: string[]; omitted: number } {
  const at = summary.indexOf(ARCHIVE_HEADING);
  if (at < 0) return { prose: summary.trim(), lines: [], omitted: 0 };
  const lines = summary
    .slice(at + ARCHIVE_HEADING.length)
    .split("\n")
    .filter((l) => l.trim() !== "");
  const omittedMatch = lines.length > 0 ? OMITTED_LINE.exec(lines[0]!) : null;
  return {
    prose: summary.slice(0, at).trim(),
    lines: omittedMatch === null ? lines : lines.slice(1),
    omitted: omittedMatch === null ? 0 : Number(omittedMatch[1]),
  };
}
