/**
 * The directory the offline summary's paths are written relative to.
 *
 * An agent works inside one project, and every path it touches starts with
 * the same long directory (`/home/me/projects/spotter-worktrees/spotter-gqc/`,
 * 14 tokens). Repeated on every line of the files changed, the code written
 * and the errors, it took about a tenth of the offline summary's budget and
 * said nothing new. So the summary states that directory once and writes the
 * paths under it relative to it; the file lists after the summary keep every
 * path absolute.
 *
 * The directory is the one that saves the most characters over the paths the
 * session touched. Once a summary has stated one, later compactions keep it,
 * so the lines a previous summary carries stay true when merged.
 */
import { pathLine } from "./pathLine.js";

/** A directory must hold at least this many of the touched paths to be worth stating. */
const MIN_PATHS = 3;

/** The directory is at least this deep (`/home/me`), so `/` or `/home` is never chosen. */
const MIN_DEPTH = 2;

/**
 * Whether `dir` can be stated in the root line and read back as itself: the
 * line is one line and the directory sits between backticks, so a directory
 * holding a line break (see pathLine.ts) or a backtick cannot be the root.
 */
function statable(dir: string): boolean {
  return pathLine(dir) === dir && !dir.includes("`");
}

/**
 * The line stating the root, read only as a summary's first line, where it is
 * written: the same words further down are a quote (of a pasted note, a tool's
 * output) and must not move the root every later compaction writes against.
 */
const STATED = /^Paths are relative to `([^`\n]+)\/`\.(?:\n|$)/;

/** The line that states `root` at the top of a summary. */
export function pathRootLine(root: string): string {
  return `Paths are relative to \`${root}/\`.`;
}

/** The root a summary states on its first line, if it states one. */
export function statedPathRoot(summary: string | undefined): string | undefined {
  return summary === undefined ? undefined : STATED.exec(summary)?.[1];
}

/**
 * The directory that saves the most characters over `paths` (each counted
 * once), or undefined when no directory holds enough of them. Deterministic:
 * among equal savings the deeper directory, then the first in sort order.
 */
export function choosePathRoot(paths: readonly string[]): string | undefined {
  const counts = new Map<string, number>();
  for (const path of new Set(paths)) {
    if (!path.startsWith("/")) continue;
    const parts = path.split("/");
    // parts[0] is "" (the leading slash); the last part is the file itself.
    for (let end = MIN_DEPTH + 1; end < parts.length; end++) {
      const dir = parts.slice(0, end).join("/");
      counts.set(dir, (counts.get(dir) ?? 0) + 1);
    }
  }
  let best: { dir: string; saving: number } | undefined;
  for (const [dir, count] of [...counts].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (count < MIN_PATHS || !statable(dir)) continue;
    // Stating the directory once costs about one of the mentions it saves.
    const saving = (count - 1) * (dir.length + 1);
    if (best === undefined || saving > best.saving || (saving === best.saving && dir.length > best.dir.length)) best = { dir, saving };
  }
  return best?.dir;
}

/** `path` relative to `root` when it lies under it, else unchanged. */
export function relativeTo(root: string | undefined, path: string): string {
  return root !== undefined && path.startsWith(`${root}/`) ? path.slice(root.length + 1) : path;
}
