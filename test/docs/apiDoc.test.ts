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

  it("gives every field its description and format, also those on a member of a nullable union (anyOf)", () => {
    const markdown = openapiToMarkdown(document);
    const schemas = (document.components as { schemas: Record<string, { properties?: Record<string, FieldSchema> }> }).schemas;
    let checked = 0;
    for (const [name, schema] of Object.entries(schemas)) {
      const section = markdown.split(`\n### ${name}\n`)[1]!.split("\n### ")[0]!;
      for (const [field, property] of Object.entries(schema.properties ?? {})) {
        const row = section.split("\n").find((line) => line.startsWith(`| \`${field}\` |`))!;
        for (const part of [property, ...(property.anyOf ?? [])]) {
          if (part.description !== undefined) expect(row).toContain(part.description.replaceAll("|", "\\|").replaceAll("\n", " "));
          if (part.format === "date-time") expect(row).toContain("ISO 8601 date-time");
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(0);
  });
});

interface FieldSchema {
  readonly description?: string;
  readonly format?: string;
  readonly anyOf?: readonly FieldSchema[];
}
