/**
 * pi's own compaction preparation, run on a pi session the way pi runs it.
 *
 * pi hands `prepareCompaction` the session's current branch: every entry on
 * the path from the root to the leaf, after bringing an old session file up to
 * the current entry format. `SessionManager.open` does both, but it also
 * rewrites an old file in place, and the corpus is read-only; so the entries
 * are parsed and migrated in memory with pi's own functions, and the branch is
 * walked here the way `SessionManager.getBranch` walks it.
 *
 * Neither module is in the package's exports, hence the file paths.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import {
  prepareCompaction,
  type CompactionPreparation,
  type CompactionSettings,
} from "../node_modules/@mariozechner/pi-coding-agent/dist/core/compaction/compaction.js";
import {
  migrateSessionEntries,
  parseSessionEntries,
  type SessionEntry,
} from "../node_modules/@mariozechner/pi-coding-agent/dist/core/session-manager.js";
import { loadPiSession } from "../test/helpers/corpus.js";

/** The branch pi would compact: root to leaf, the leaf being the last entry written. */
export function piBranch(file: string): SessionEntry[] {
  const entries = parseSessionEntries(readFileSync(file, "utf8"));
  migrateSessionEntries(entries);
  const byId = new Map<string, SessionEntry>();
  let leaf: SessionEntry | undefined;
  for (const entry of entries) {
    if (entry.type === "session") continue;
    byId.set(entry.id, entry);
    leaf = entry;
  }
  const branch: SessionEntry[] = [];
  for (let e = leaf; e !== undefined; e = e.parentId === null ? undefined : byId.get(e.parentId)) branch.unshift(e);
  return branch;
}

export function piSettings(keepRecentTokens: number, reserveTokens: number): CompactionSettings {
  return { enabled: true, keepRecentTokens, reserveTokens };
}

export function runPiPrepare(branch: SessionEntry[], settings: CompactionSettings): CompactionPreparation {
  const preparation = prepareCompaction(branch, settings);
  if (preparation === undefined) throw new Error("pi's prepareCompaction found nothing to compact");
  return preparation;
}

/**
 * The messages pi keeps verbatim, converted by the same loader that turns the
 * whole session into compactd input, so both tails are priced alike.
 */
export function piKeptTail(branch: readonly SessionEntry[], preparation: CompactionPreparation): unknown {
  const first = branch.findIndex((entry) => entry.id === preparation.firstKeptEntryId);
  if (first < 0) throw new Error(`pi's first kept entry ${preparation.firstKeptEntryId} is not on the branch`);
  const dir = mkdtempSync(path.join(tmpdir(), "compactd-bench-"));
  try {
    const file = path.join(dir, "kept.jsonl");
    writeFileSync(file, branch.slice(first).map((entry) => JSON.stringify(entry)).join("\n"));
    return loadPiSession(file);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
