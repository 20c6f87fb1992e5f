/**
 * Writes a benchmark's generated table into docs/BENCHMARKS.md between its own
 * markers, so a rerun replaces its figures and leaves the hand-written reading
 * and the other benchmarks' sections as they are.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";

/** Replaces the block marked `bench:<name>` (appending a `## <heading>` section with it the first time). */
export function writeGeneratedSection(file: string, name: string, heading: string, generated: string): void {
  const startMarker = `<!-- bench:${name}:start -->`;
  const endMarker = `<!-- bench:${name}:end -->`;
  const block = `${startMarker}\n${generated.trim()}\n${endMarker}`;
  const current = existsSync(file) ? readFileSync(file, "utf8") : "# Benchmarks\n";
  const start = current.indexOf(startMarker);
  const end = current.indexOf(endMarker);
  const next =
    start >= 0 && end > start
      ? current.slice(0, start) + block + current.slice(end + endMarker.length)
      : `${current.trimEnd()}\n\n## ${heading}\n\n${block}\n`;
  writeFileSync(file, next);
}
