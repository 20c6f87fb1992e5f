/**
 * The served OpenAPI document is valid, describes what the API really
 * answers, and is the one committed as docs/openapi.json (regenerate it with
 * `UPDATE_OPENAPI=1 npx vitest run test/api/openapi.test.ts`).
 */
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { Ajv2020 } from "ajv/dist/2020.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openapiDocument } from "../../src/api/openapiDocument.js";
import { loadConfig } from "../../src/config.js";
import { markedRequest } from "../helpers/markedConversation.js";
import { repoRoot } from "../helpers/repoRoot.js";
import { bearer } from "../helpers/serviceConfig.js";
import { startServiceHarness, type ServiceHarness } from "../helpers/serviceHarness.js";

const committedPath = path.join(repoRoot, "docs/openapi.json");

let h: ServiceHarness;
let document: Record<string, unknown>;
let ajv: Ajv2020;

beforeAll(async () => {
  // No API key: the offline summarizer answers at once.
  h = await startServiceHarness("openapi", { env: { ANTHROPIC_API_KEY: "" } });
  document = (await h.app.inject({ method: "GET", url: "/openapi.json" })).json();
  ajv = new Ajv2020({ strict: false });
  ajv.addFormat("date-time", (value: string) => /^\d{4}-\d\d-\d\dT/.test(value) && !Number.isNaN(Date.parse(value)));
  ajv.addSchema(document, "openapi");
});

afterAll(async () => {
  await h.close();
});

function matches(schema: string, value: unknown): string | null {
  const validate = ajv.getSchema(`openapi#/components/schemas/${schema}`)!;
  return validate(value) ? null : ajv.errorsText(validate.errors);
}

describe("GET /openapi.json", () => {
  it("is an OpenAPI 3.1 document listing every route", () => {
    expect(document.openapi).toBe("3.1.0");
    expect(Object.keys(document.paths as object).sort()).toEqual(
      ["/healthz", "/metrics", "/openapi.json", "/readyz", "/v1/batches/{id}", "/v1/compactions", "/v1/compactions/batch", "/v1/compactions/{id}"].sort(),
    );
  });

  it("accepts the requests the API accepts and refuses what it refuses", () => {
    expect(matches("CompactionRequest", markedRequest("x", { reason: "overflow", conversationId: "c" }))).toBeNull();
    expect(matches("CompactionRequest", { messages: [] })).not.toBeNull();
    expect(matches("CompactionRequest", { messages: [], contextWindow: 1000, extra: 1 })).not.toBeNull();
    expect(matches("BatchRequest", { items: [markedRequest("y")], callbackUrl: "https://hooks.example.com/x" })).toBeNull();
  });

  it("describes the answers the API really gives", async () => {
    const queued = await h.app.inject({ method: "POST", url: "/v1/compactions", headers: bearer("acme"), payload: markedRequest("z") });
    expect(matches("Queued", queued.json())).toBeNull();
    const view = await h.app.inject({ method: "GET", url: `${queued.headers.location}?wait=20`, headers: bearer("acme") });
    expect(view.json().status).toBe("completed");
    expect(matches("Job", view.json())).toBeNull();
    const refused = await h.app.inject({ method: "POST", url: "/v1/compactions", headers: bearer("acme"), payload: { messages: [] } });
    expect(matches("Error", refused.json())).toBeNull();
    const batch = await h.app.inject({
      method: "POST",
      url: "/v1/compactions/batch",
      headers: bearer("acme"),
      payload: { items: [markedRequest("b")] },
    });
    expect(matches("Batch", batch.json())).toBeNull();
  });

  it("is committed as docs/openapi.json", () => {
    // Written for the default configuration, which is what the docs describe.
    const generated = `${JSON.stringify(openapiDocument(loadConfig({}).maxBatchItems), null, 2)}\n`;
    if (process.env.UPDATE_OPENAPI === "1") writeFileSync(committedPath, generated);
    expect(readFileSync(committedPath, "utf8")).toBe(generated);
  });
});
