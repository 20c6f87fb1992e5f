/**
 * The README's tables are documentation users configure and alert from; these
 * checks keep them equal to what the code really reads and exports.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { CONFIG_VARIABLES } from "../src/config.js";
import { createMetrics } from "../src/metrics/metrics.js";
import { repoRoot } from "./helpers/repoRoot.js";

const readme = readFileSync(path.join(repoRoot, "README.md"), "utf8");

/** First-column names of the markdown table rows under `heading`. */
function tableNames(heading: string): string[] {
  const section = readme.slice(readme.indexOf(heading));
  const table = section.slice(0, section.indexOf("\n\n", section.indexOf("|")));
  return [...table.matchAll(/^\| `([^`]+)` \|/gm)].map((m) => m[1]!);
}

describe("README", () => {
  it("documents exactly the environment variables the service reads", () => {
    expect(tableNames("### Configuration").sort()).toEqual(CONFIG_VARIABLES.map((v) => v.env).sort());
  });

  it("documents exactly the compactd_ metrics the service exports", async () => {
    const names = (await createMetrics().registry.getMetricsAsJSON()).map((m) => m.name).filter((n) => n.startsWith("compactd_"));
    expect(tableNames("### Metrics").sort()).toEqual(names.sort());
  });
});
