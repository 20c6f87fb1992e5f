import { describe, expect, it } from "vitest";
import { openapiDocument } from "../../src/api/openapiDocument.js";
import { loadConfig } from "../../src/config.js";
import { openapiToTypeScript } from "../../scripts/openapiToTypeScript.js";

describe("the client's API types", () => {
  it("are the API's OpenAPI document rendered as TypeScript", async () => {
    const document = openapiDocument(loadConfig({}).maxBatchItems);
    await expect(openapiToTypeScript(document)).toMatchFileSnapshot("../../src/client/apiTypes.ts");
  });
});
