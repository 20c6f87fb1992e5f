import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { repoRoot } from "../helpers/repoRoot.js";

/** Every module `entry` loads, following relative imports: the files, and the packages by name. Type-only imports load nothing. */
function importGraph(entry: string): { files: string[]; packages: string[] } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string): void => {
    if (files.has(file)) return;
    files.add(file);
    const source = readFileSync(file, "utf8");
    for (const [, specifier] of source.matchAll(/(?:^|\s)(?:import|export)\s+(?!type\b)[^;]*?\bfrom\s+"([^"]+)"|\bimport\(\s*"([^"]+)"\s*\)/gm)) {
      if (specifier === undefined) continue;
      if (specifier.startsWith(".")) visit(path.resolve(path.dirname(file), specifier.replace(/\.js$/, ".ts")));
      else packages.add(specifier);
    }
  };
  visit(entry);
  return { files: [...files].map((file) => path.relative(repoRoot, file)).sort(), packages: [...packages].sort() };
}

describe("compactd/client", () => {
  const graph = importGraph(path.join(repoRoot, "src/client/index.ts"));

  it("loads nothing of the service: no Redis, no queue, no HTTP server", () => {
    expect(graph.packages.filter((name) => !name.startsWith("node:"))).toEqual([]);
    // Beside the core, only the fetch it sends with.
    expect(graph.files.filter((file) => !file.startsWith("src/client/") && !file.startsWith("src/core/"))).toEqual([
      "src/http/nodeHttpFetch.ts",
      "src/http/sseEventCounter.ts",
    ]);
  });

  it("reaches into the core only for its pure decision and contract modules", () => {
    expect(graph.files.filter((file) => file.startsWith("src/core/"))).toEqual([
      "src/core/contextLimit.ts",
      // How refusals of the messages name a field (nestingDepth's and the canonical writer's).
      "src/core/fieldPath.ts",
      "src/core/formats/nestingDepth.ts",
      "src/core/overflow.ts",
      "src/core/replaces.ts",
      "src/core/settings.ts",
    ]);
  });
});
