import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { readDashboard, ROOT } from "./chart.js";
import { ruleExpressions } from "./helmRender.js";

const doc = readFileSync(new URL("docs/OPERATIONS.md", ROOT), "utf8");

/** The text under each `### ` heading, by heading. */
function sections(markdown: string): Map<string, string> {
  const result = new Map<string, string>();
  for (const part of markdown.split(/^### /m).slice(1)) {
    const newline = part.indexOf("\n");
    result.set(part.slice(0, newline).trim(), part.slice(newline + 1).split(/^## /m)[0]!);
  }
  return result;
}

describe("docs/OPERATIONS.md", () => {
  const bySection = sections(doc);

  it("describes every dashboard panel with its queries exactly as the dashboard runs them, and a healthy and unhealthy reading", () => {
    const panels = readDashboard().panels.filter((panel) => panel.type !== "row");
    const missing = panels.flatMap((panel) => {
      const section = bySection.get(panel.title);
      if (section === undefined) return [`no section for panel "${panel.title}"`];
      const queries = (panel.targets ?? []).filter((target) => !section.includes(target.expr)).map((t) => `"${panel.title}" lacks ${t.expr}`);
      const readings = /\*\*Healthy:\*\*/.test(section) && /\*\*Unhealthy:\*\*/.test(section) ? [] : [`"${panel.title}" lacks a healthy or unhealthy reading`];
      return [...queries, ...readings];
    });
    expect(missing).toEqual([]);
  });

  it("has a runbook section for every alert the chart installs, under the name runbook_url links to", async () => {
    const alerts = (await ruleExpressions()).map((rule) => rule.alert);
    expect(alerts.filter((alert) => !bySection.has(alert))).toEqual([]);
  });
});
