/**
 * An exported value nobody imports is dead code that looks alive: a reader
 * takes it for part of a module's contract and keeps it working. This test
 * lists every value exported from src that no module of the repository
 * (src, tests, benchmarks, examples, scripts) imports; the package's entry
 * points are exempt, their exports are for the package's users.
 */
import { describe, expect, it } from "vitest";
import { readModules } from "../helpers/sourceGraph.js";

/**
 * The files package.json `exports` and `bin` publish, and the API's intake
 * thread (piscina loads its default export by path): their exports are used
 * by definition.
 */
const ENTRY_POINTS = new Set(["src/core/index.ts", "src/client/index.ts", "src/summarizers/anthropic.ts", "src/cli/main.ts", "src/api/intakeThread.ts"]);

function unusedExports(): string[] {
  const modules = readModules(["src", "test", "bench", "examples", "scripts"]);
  const imported = new Map<string, Set<string>>();
  for (const module of modules) {
    for (const { target, names } of module.imports) {
      const set = imported.get(target) ?? new Set<string>();
      imported.set(target, set);
      for (const name of names) set.add(name);
    }
  }
  return modules
    .filter((module) => module.file.startsWith("src/") && !ENTRY_POINTS.has(module.file))
    .flatMap((module) => {
      const names = imported.get(module.file) ?? new Set<string>();
      if (names.has("*")) return [];
      return module.exports.filter((exported) => !exported.typeOnly && !names.has(exported.name)).map(({ name }) => `${module.file}: ${name}`);
    });
}

describe("the values src exports", () => {
  it("each have an importer", () => {
    expect(unusedExports()).toEqual([]);
  });
});
