import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { openapiToTypeScript } from "../../scripts/openapiToTypeScript.js";
import { MAX_WAIT_PER_REQUEST_SECONDS } from "../../src/client/compactdClient.js";
import { repoRoot } from "../helpers/repoRoot.js";

/** The contract as committed (test/api/openapi.test.ts keeps it equal to what GET /openapi.json serves). */
const document = JSON.parse(readFileSync(path.join(repoRoot, "docs/openapi.json"), "utf8")) as {
  paths: Record<string, Record<string, { parameters?: { name: string; schema: { maximum?: number } }[] }>>;
  components: { schemas: Record<string, { properties?: Record<string, FieldSchema> }> };
};

interface FieldSchema {
  readonly description?: string;
  readonly anyOf?: readonly FieldSchema[];
}

describe("the client's API types", () => {
  it("are the API's OpenAPI document rendered as TypeScript", async () => {
    await expect(openapiToTypeScript(document)).toMatchFileSnapshot("../../src/client/apiTypes.ts");
  });
});

describe("the client's API types' doc comments", () => {
  it("carry every field's description, also one on a member of a nullable union (anyOf)", () => {
    const types = openapiToTypeScript(document);
    const descriptions: string[] = [];
    for (const schema of Object.values(document.components.schemas)) {
      for (const property of Object.values(schema.properties ?? {})) {
        for (const part of [property, ...(property.anyOf ?? [])]) if (part.description !== undefined) descriptions.push(part.description);
      }
    }
    expect(descriptions.length).toBeGreaterThan(0);
    for (const description of descriptions) {
      for (const line of description.split("\n")) expect(types).toContain(line.replaceAll("*/", "*\\/"));
    }
  });
});

describe("the client's waits", () => {
  it("never ask one request to wait longer than the API allows", () => {
    const wait = document.paths["/v1/compactions/{id}"]!.get!.parameters!.find((parameter) => parameter.name === "wait")!;
    expect(MAX_WAIT_PER_REQUEST_SECONDS).toBe(wait.schema.maximum);
  });
});
