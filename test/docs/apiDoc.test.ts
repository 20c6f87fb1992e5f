import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { openapiToMarkdown } from "../../scripts/openapiToMarkdown.js";
import { repoRoot } from "../helpers/repoRoot.js";

describe("docs/API.md", () => {
  const document = JSON.parse(readFileSync(path.join(repoRoot, "docs/openapi.json"), "utf8")) as Record<string, unknown>;

  it("is docs/openapi.json rendered", async () => {
    await expect(openapiToMarkdown(document)).toMatchFileSnapshot("../../docs/API.md");
  });

  it("documents every endpoint and every field of every schema", () => {
    const markdown = openapiToMarkdown(document);
    const paths = document.paths as Record<string, Record<string, unknown>>;
    for (const [route, item] of Object.entries(paths)) {
      for (const method of Object.keys(item)) expect(markdown).toContain(`### \`${method.toUpperCase()} ${route}\``);
    }
    const schemas = (document.components as { schemas: Record<string, { properties?: Record<string, unknown> }> }).schemas;
    for (const schema of Object.values(schemas)) {
      for (const field of Object.keys(schema.properties ?? {})) expect(markdown).toMatch(new RegExp(`\\| \`${field}\` \\|`));
    }
  });
});
