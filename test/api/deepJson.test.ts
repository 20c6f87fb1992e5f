import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runApi, type RunningApi } from "../../src/api/runApi.js";
import { MAX_NESTING_DEPTH } from "../../src/core/formats/nestingDepth.js";
import { deleteKeysUnder } from "../helpers/redisTestPrefix.js";
import { bearer, serviceConfig } from "../helpers/serviceConfig.js";
import { deeplyNestedJson, toolCallWithInput } from "../helpers/deepJson.js";

const config = serviceConfig("deep-json");
let api: RunningApi;
let base: string;

beforeAll(async () => {
  api = await runApi(config, { logger: false }, "127.0.0.1");
  base = `http://127.0.0.1:${api.port}`;
});

afterAll(async () => {
  await api.close();
  await deleteKeysUnder(config.queuePrefix);
});

/** POSTs a body written by hand: JSON.stringify itself cannot write 50,000 levels. */
async function post(path: string, body: string, headers: Record<string, string> = {}) {
  const response = await fetch(`${base}${path}`, {
    method: "POST",
    headers: { ...bearer("acme"), "content-type": "application/json", ...headers },
    body,
  });
  return { status: response.status, body: (await response.json()) as { error?: { code: string; field: string; message: string } } };
}

const deep = deeplyNestedJson(50_000);
const request = (messages: string, extra = "") => `{"contextWindow":100000${extra},"messages":${messages}}`;

describe("a tool input nested 50,000 levels deep, sent to the HTTP API", () => {
  it("is refused with a 400 naming the field", async () => {
    const answer = await post("/v1/compactions", request(toolCallWithInput(deep)));
    expect(answer.status).toBe(400);
    expect(answer.body.error).toMatchObject({ field: "messages[1].content[0].input" });
    expect(answer.body.error!.message).toContain(`more than ${MAX_NESTING_DEPTH} levels deep`);
  });

  it("is refused with a 400 when an idempotency key makes the API digest the request first", async () => {
    const answer = await post("/v1/compactions", request(toolCallWithInput(deep)), { "idempotency-key": "deep-1" });
    expect(answer.status).toBe(400);
    expect(answer.body.error!.field).toBe("messages[1].content[0].input");
  });

  it("is refused with a 400 in metadata, in a batch item and in OpenAI arguments", async () => {
    const inMetadata = await post("/v1/compactions", request(toolCallWithInput("{}"), `,"metadata":${deep}`));
    expect(inMetadata.status).toBe(400);
    expect(inMetadata.body.error!.field).toMatch(/^metadata\./);

    const inBatch = await post("/v1/compactions/batch", `{"items":[${request(toolCallWithInput(deep))}]}`);
    expect(inBatch.status).toBe(400);
    expect(inBatch.body.error!.field).toMatch(/^items\[0\]\.messages\[1\]/);

    const openai = `[{"role":"user","content":"go"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":${JSON.stringify(deep)}}}]},{"role":"tool","tool_call_id":"c1","content":"ok"}]`;
    const inArguments = await post("/v1/compactions", request(openai));
    expect(inArguments.status).toBe(400);
    expect(inArguments.body.error!.field).toBe("messages[1].tool_calls[0].function.arguments");
  });

  it("leaves the API serving: nesting at the bound is an ordinary request", async () => {
    // Body → messages → message → content → block → input: five levels above the input.
    const atBound = deeplyNestedJson(MAX_NESTING_DEPTH - 5);
    const answer = await post("/v1/compactions", request(toolCallWithInput(atBound)));
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ status: "nothing_to_compact", stillAboveThreshold: false });
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
  });
});
