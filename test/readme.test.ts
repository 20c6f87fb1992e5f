/**
 * The README's tables are documentation users configure and alert from; these
 * checks keep them equal to what the code really reads and exports. The
 * environment table is generated from CONFIG_VARIABLES:
 * `UPDATE_README=1 npx vitest run test/readme.test.ts` rewrites it.
 */
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { CONFIG_VARIABLES } from "../src/config.js";
import { createMetrics } from "../src/metrics/metrics.js";
import { repoRoot } from "./helpers/repoRoot.js";

const readmePath = path.join(repoRoot, "README.md");
const readme = readFileSync(readmePath, "utf8");

const CONFIGURATION_HEADER = "| variable | default | meaning |\n|---|---|---|\n";

function configurationTable(): string {
  const rows = CONFIG_VARIABLES.map((variable) => `| \`${variable.env}\` | ${variable.default} | ${variable.description} |\n`);
  return CONFIGURATION_HEADER + rows.join("");
}

/** First-column names of the markdown table rows under `heading`. */
function tableNames(heading: string): string[] {
  const section = readme.slice(readme.indexOf(heading));
  const table = section.slice(0, section.indexOf("\n\n", section.indexOf("|")));
  return [...table.matchAll(/^\| `([^`]+)` \|/gm)].map((m) => m[1]!);
}

describe("README", () => {
  it("holds the environment table generated from the service's own table, bounds included", () => {
    const start = readme.indexOf(CONFIGURATION_HEADER, readme.indexOf("### Configuration"));
    const end = readme.indexOf("\n\n", start) + 1;
    expect(start).toBeGreaterThan(0);
    const generated = readme.slice(0, start) + configurationTable() + readme.slice(end);
    if (process.env.UPDATE_README === "1") writeFileSync(readmePath, generated);
    expect(readme).toBe(generated);
  });

  it("documents exactly the compactd_ metrics the service exports", async () => {
    const names = (await createMetrics().registry.getMetricsAsJSON()).map((m) => m.name).filter((n) => n.startsWith("compactd_"));
    expect(tableNames("### Metrics").sort()).toEqual(names.sort());
  });
});
