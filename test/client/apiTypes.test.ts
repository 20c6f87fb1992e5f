import { describe, expect, it } from "vitest";
import { openapiDocument } from "../../src/api/openapiDocument.js";
import { loadConfig } from "../../src/config.js";
import { openapiToTypeScript } from "../../scripts/openapiToTypeScript.js";
import { MAX_WAIT_PER_REQUEST_SECONDS } from "../../src/client/compactdClient.js";

describe("the client's API types", () => {
  it("are the API's OpenAPI document rendered as TypeScript", async () => {
    const document = openapiDocument(loadConfig({}).maxBatchItems);
    await expect(openapiToTypeScript(document)).toMatchFileSnapshot("../../src/client/apiTypes.ts");
  });
});

describe("the client's waits", () => {
  it("never ask one request to wait longer than the API allows", () => {
    const document = openapiDocument(loadConfig({}).maxBatchItems) as {
      paths: Record<string, Record<string, { parameters: { name: string; schema: { maximum: number } }[] }>>;
    };
    const wait = document.paths["/v1/compactions/{id}"]!.get!.parameters.find((parameter) => parameter.name === "wait")!;
    expect(MAX_WAIT_PER_REQUEST_SECONDS).toBe(wait.schema.maximum);
  });
});
