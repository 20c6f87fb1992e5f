/**
 * The folders under src are layers: core at the bottom, the CLI at the top.
 * A folder that imports another which imports it back (even through a third,
 * even for a type) has no layer, and its pieces can no longer be understood,
 * tested or replaced one at a time. This test reads every import statement
 * of src and fails on any cycle between top-level folders, naming it.
 */
import { describe, expect, it } from "vitest";
import { readModules } from "../helpers/sourceGraph.js";

/** `src/queue/x.ts` → `queue`; files directly under src (config.ts) are no folder. */
function folderOf(file: string): string | undefined {
  const parts = file.split("/");
  return parts[0] === "src" && parts.length > 2 ? parts[1] : undefined;
}

/** Every folder → the folders it imports from, with one file that does, for the failure message. */
function folderGraph(): Map<string, Map<string, string>> {
  const graph = new Map<string, Map<string, string>>();
  for (const module of readModules(["src"])) {
    const from = folderOf(module.file);
    if (from === undefined) continue;
    const edges = graph.get(from) ?? new Map<string, string>();
    graph.set(from, edges);
    for (const { target } of module.imports) {
      const to = folderOf(target);
      if (to !== undefined && to !== from && !edges.has(to)) edges.set(to, `${module.file} → ${target}`);
    }
  }
  return graph;
}

/** Each cycle once, as the path of folders that closes it, found by depth-first search. */
function cyclesOf(graph: ReadonlyMap<string, ReadonlyMap<string, string>>): string[][] {
  const cycles = new Map<string, string[]>();
  const visit = (node: string, path: string[]): void => {
    for (const next of graph.get(node)?.keys() ?? []) {
      const at = path.indexOf(next);
      if (at >= 0) {
        const cycle = path.slice(at);
        cycles.set([...cycle].sort().join(","), [...cycle, next]);
      } else visit(next, [...path, next]);
    }
  };
  for (const start of graph.keys()) visit(start, [start]);
  return [...cycles.values()];
}

describe("the folders under src", () => {
  it("import each other in one direction only", () => {
    const graph = folderGraph();
    const described = cyclesOf(graph).map((cycle) =>
      cycle
        .slice(1)
        .map((to, i) => graph.get(cycle[i]!)!.get(to)!)
        .join("; "),
    );
    expect(described).toEqual([]);
  });

  it("are seen by the check (it would notice a cycle)", () => {
    const graph = folderGraph();
    expect(graph.get("api")?.has("core")).toBe(true);
    const found = cyclesOf(new Map([["a", new Map([["b", ""]])], ["b", new Map([["c", ""]])], ["c", new Map([["a", ""]])]]));
    expect(found).toHaveLength(1);
    expect(new Set(found[0])).toEqual(new Set(["a", "b", "c"]));
  });
});
