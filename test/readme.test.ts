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
import { MAX_NESTING_DEPTH } from "../src/core/formats/nestingDepth.js";
import {
  DEFAULT_KEEP_RECENT_TOKENS,
  DEFAULT_RESERVE_TOKENS,
  DEFAULT_SUMMARIZATION_STALL_TIMEOUT_MS,
  MAX_SUMMARIZATION_STALL_TIMEOUT_MS,
  MIN_SUMMARIZATION_STALL_TIMEOUT_MS,
  MIN_SUMMARY_TOKENS,
  MIN_USABLE_TOKENS,
} from "../src/core/settings.js";
import { createMetrics } from "../src/metrics/metrics.js";
import { repoRoot } from "./helpers/repoRoot.js";

const readmePath = path.join(repoRoot, "README.md");
const readme = readFileSync(readmePath, "utf8");

const CONFIGURATION_HEADER = "| variable | default | meaning |\n|---|---|---|\n";

function configurationTable(): string {
  const rows = CONFIG_VARIABLES.map((variable) => `| \`${variable.env}\` | ${variable.default} | ${variable.description} |\n`);
  return CONFIGURATION_HEADER + rows.join("");
}

/** The cells after the first of the README's table row for `name`. */
function rowOf(name: string): string[] {
  const row = readme.split("\n").find((line) => line.startsWith(`| \`${name}\` |`));
  expect(row, name).toBeDefined();
  return row!.split(" | ").slice(1);
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

  it("states the core's defaults and bounds as the core has them", () => {
    expect(rowOf("--reserve-tokens N")[1]).toBe(`${DEFAULT_RESERVE_TOKENS} |`);
    expect(rowOf("--keep-recent-tokens N")[1]).toBe(`${DEFAULT_KEEP_RECENT_TOKENS} |`);
    expect(rowOf("--max-summary-tokens N")[0]).toContain(`a cap below ${MIN_SUMMARY_TOKENS} is raised to ${MIN_SUMMARY_TOKENS},`);
    const [stallMeaning, stallDefault] = rowOf("--stall-timeout-ms N");
    expect(stallMeaning).toContain(`from ${MIN_SUMMARIZATION_STALL_TIMEOUT_MS} (a second) to ${MAX_SUMMARIZATION_STALL_TIMEOUT_MS} (an hour)`);
    expect(stallDefault).toBe(`${DEFAULT_SUMMARIZATION_STALL_TIMEOUT_MS} |`);
    expect(readme).toContain(`below \`--reserve-tokens\` + ${MIN_USABLE_TOKENS} is refused`);
    expect(readme).toContain(`at most ${MAX_NESTING_DEPTH} levels deep`);
    const operations = readFileSync(path.join(repoRoot, "docs", "OPERATIONS.md"), "utf8");
    expect(operations).toContain(`timeout (${DEFAULT_SUMMARIZATION_STALL_TIMEOUT_MS / 1000} s by default)`);
  });

  it("documents exactly the compactd_ metrics the service exports", async () => {
    const names = (await createMetrics().registry.getMetricsAsJSON()).map((m) => m.name).filter((n) => n.startsWith("compactd_"));
    expect(tableNames("### Metrics").sort()).toEqual(names.sort());
  });
});
