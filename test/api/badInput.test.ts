import type { FastifyInstance, InjectOptions } from "fastify";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp } from "../../src/api/buildApp.js";
import type { Config } from "../../src/config.js";
import { conversation, reactTurn } from "../helpers/conversations.js";
import { deleteKeysUnder } from "../helpers/redisTestPrefix.js";
import { bearer, serviceConfig } from "../helpers/serviceConfig.js";

let app: FastifyInstance;
let config: Config;

beforeAll(async () => {
  config = serviceConfig("badinput", { COMPACTD_BODY_LIMIT_BYTES: "200000", COMPACTD_MAX_BATCH_ITEMS: "5" });
  app = await buildApp(config, { resolveHost: async () => [{ address: "127.0.0.1", family: 4 }] });
});

afterAll(async () => {
  await app.close();
  await deleteKeysUnder(config.queuePrefix);
});

const json = { ...bearer("acme"), "content-type": "application/json" };

function send(options: Partial<InjectOptions> & { payload?: InjectOptions["payload"] }) {
  return app.inject({ method: "POST", url: "/v1/compactions", headers: json, ...options } as InjectOptions);
}

async function expectError(
  response: Awaited<ReturnType<typeof send>>,
  status: number,
  expected: { code?: string; field?: string | RegExp },
): Promise<void> {
  expect(response.statusCode, response.body).toBe(status);
  const { error } = response.json();
  expect(typeof error.message).toBe("string");
  expect(error.message.length).toBeGreaterThan(0);
  if (expected.code !== undefined) expect(error.code).toBe(expected.code);
  if (typeof expected.field === "string") expect(error.field).toBe(expected.field);
  else if (expected.field !== undefined) expect(error.field).toMatch(expected.field);
}

const valid = { messages: reactTurn({ rounds: 1 }), contextWindow: 100_000 };

describe("requests the API refuses, each with a 4xx naming the problem", () => {
  it("malformed JSON", async () => {
    await expectError(await send({ payload: '{"messages": [' }), 400, { code: "invalid_json" });
  });

  it("an empty JSON body", async () => {
    await expectError(await send({ payload: "" }), 400, { code: "invalid_json" });
  });

  it("a JSON value that is not an object", async () => {
    await expectError(await send({ payload: "[1,2]" }), 400, { code: "invalid_request" });
    await expectError(await send({ payload: "null" }), 400, { code: "invalid_request" });
  });

  it("a body that is not JSON", async () => {
    await expectError(await send({ headers: { ...json, "content-type": "text/plain" }, payload: "hello" }), 415, {
      code: "unsupported_media_type",
    });
    await expectError(await send({ headers: { ...json, "content-type": "application/x-www-form-urlencoded" }, payload: "a=1" }), 415, {
      code: "unsupported_media_type",
    });
  });

  it("a body over the size limit", async () => {
    const huge = { ...valid, messages: [{ role: "user", content: "x".repeat(300_000) }] };
    const response = await send({ payload: JSON.stringify(huge) });
    await expectError(response, 413, { code: "body_too_large" });
    expect(response.json().error.message).toBe(
      `the body is larger than the limit of ${config.bodyLimitBytes} bytes (COMPACTD_BODY_LIMIT_BYTES; a compressed body counts as it decompresses)`,
    );
  });

  it("a prototype-poisoning key, anywhere in the body, naming it", async () => {
    await expectError(await send({ payload: '{"__proto__": {"admin": true}, "messages": [], "contextWindow": 1000}' }), 400, {
      code: "invalid_request",
      field: "__proto__",
    });
    const inBlock = `{"messages": [{"role": "user", "content": [{"type": "text", "text": "hi", "__proto__": {"x": 1}}]}], "contextWindow": 20000}`;
    await expectError(await send({ payload: inBlock }), 400, { code: "invalid_request", field: "messages[0].content[0].__proto__" });
    const inInput = {
      ...valid,
      messages: [{ role: "assistant", content: [{ type: "tool_use", id: "t1", name: "f", input: { constructor: { prototype: { x: 1 } } } }] }],
    };
    await expectError(await send({ payload: JSON.stringify(inInput) }), 400, {
      code: "invalid_request",
      field: "messages[0].content[0].input.constructor",
    });
  });

  it("accepts a `constructor` key that sets no prototype, as tool inputs and metadata may carry one", async () => {
    const metadata = { constructor: "Widget", nested: { constructor: { name: "Widget" } } };
    const response = await send({ payload: { ...valid, metadata } });
    expect([200, 202]).toContain(response.statusCode);
  });

  it("a context window that leaves no room besides the reserve, naming the smallest that works", async () => {
    const response = await send({ payload: { ...valid, contextWindow: 1000 } });
    await expectError(response, 400, { code: "invalid_request", field: "contextWindow" });
    expect(response.json().error.message).toMatch(/16384 tokens are reserved for the next response .* at least 18432$/);
    const smaller = await send({ payload: { ...valid, contextWindow: 5000, settings: { reserveTokens: 4000 } } });
    expect(smaller.json().error.message).toMatch(/at least 6048$/);
  });

  it("a missing context window", async () => {
    await expectError(await send({ payload: { messages: valid.messages } }), 400, { code: "invalid_request", field: "contextWindow" });
  });

  it("fields of the wrong type or out of range", async () => {
    await expectError(await send({ payload: { ...valid, contextWindow: "big" } }), 400, { field: "contextWindow" });
    await expectError(await send({ payload: { ...valid, contextWindow: 1.5 } }), 400, { field: "contextWindow" });
    await expectError(await send({ payload: { ...valid, contextWindow: -1 } }), 400, { field: "contextWindow" });
    await expectError(await send({ payload: { ...valid, messages: "hello" } }), 400, { field: "messages" });
    await expectError(await send({ payload: { ...valid, reason: "bored" } }), 400, { field: "reason" });
    await expectError(await send({ payload: { ...valid, settings: { reserveTokens: 0 } } }), 400, { field: "settings.reserveTokens" });
    await expectError(await send({ payload: { ...valid, metadata: [1, 2] } }), 400, { field: "metadata" });
    await expectError(await send({ payload: { ...valid, model: "two words" } }), 400, { field: "model" });
  });

  it("an unknown field, so a typo is not silently ignored", async () => {
    await expectError(await send({ payload: { ...valid, setings: {} } }), 400, { field: "setings" });
    await expectError(await send({ payload: { ...valid, settings: { keepRecent: 10 } } }), 400, { field: "settings.keepRecent" });
  });

  it("an unknown role, naming the message", async () => {
    const messages = [{ role: "user", content: "hi" }, { role: "robot", content: "beep" }];
    await expectError(await send({ payload: { ...valid, messages } }), 400, { code: "invalid_conversation", field: /^messages\[1\]/ });
  });

  it("a tool result whose call is not in the conversation, naming the result", async () => {
    const messages = [
      { role: "user", content: "hi" },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_missing", content: "42" }] },
    ];
    await expectError(await send({ payload: { ...valid, messages } }), 400, { code: "invalid_conversation", field: /^messages\[1\]/ });
  });

  it("metadata over its size limit", async () => {
    await expectError(await send({ payload: { ...valid, metadata: { blob: "x".repeat(20_000) } } }), 400, { field: "metadata" });
  });

  it("an Idempotency-Key that is not printable ASCII", async () => {
    await expectError(await send({ headers: { ...json, "idempotency-key": "" }, payload: valid }), 400, { field: "Idempotency-Key" });
  });

  it("a wait that is not a whole number of seconds in range", async () => {
    for (const wait of ["abc", "-1", "61", "1.5"]) {
      const response = await app.inject({ method: "GET", url: `/v1/compactions/cmp_x?wait=${wait}`, headers: bearer("acme") });
      await expectError(response, 400, { field: "wait" });
    }
  });

  it("an unknown route or method", async () => {
    await expectError(await app.inject({ method: "GET", url: "/v2/compactions", headers: bearer("acme") }), 404, { code: "not_found" });
    await expectError(await app.inject({ method: "PUT", url: "/v1/compactions", headers: bearer("acme") }), 404, { code: "not_found" });
  });

  it("a malformed URL", async () => {
    await expectError(await app.inject({ method: "GET", url: "/v1/compactions/%E0%A4%A", headers: bearer("acme") }), 400, {});
  });
});

/** Requests built to break things: random bodies, hostile shapes, random headers and paths. */
function hostileRequest(): fc.Arbitrary<InjectOptions> {
  const messagesOf = fc.oneof(
    fc.constant(conversation(reactTurn({ rounds: 2, toolResultChars: 100 }))),
    fc.array(fc.jsonValue(), { maxLength: 5 }),
    fc.array(
      fc.record(
        {
          role: fc.oneof(fc.constantFrom("user", "assistant", "tool", "system", "developer", "function"), fc.string()),
          content: fc.oneof(
            fc.string(),
            fc.array(
              fc.record(
                {
                  type: fc.constantFrom("text", "tool_use", "tool_result", "image", "thinking", "weird"),
                  text: fc.oneof(fc.string(), fc.integer()),
                  id: fc.string(),
                  tool_use_id: fc.string(),
                  input: fc.jsonValue(),
                },
                { requiredKeys: ["type"] },
              ),
              { maxLength: 3 },
            ),
            fc.jsonValue(),
          ),
          tool_calls: fc.jsonValue(),
          tool_call_id: fc.string(),
        },
        { requiredKeys: [] },
      ),
      { maxLength: 6 },
    ),
  );
  const body = fc.oneof(
    fc.record(
      {
        messages: messagesOf,
        contextWindow: fc.oneof(fc.integer({ min: -10, max: 300_000 }), fc.double(), fc.string(), fc.constant(null)),
        settings: fc.oneof(fc.jsonValue(), fc.record({ reserveTokens: fc.integer(), keepRecentTokens: fc.jsonValue() })),
        reason: fc.oneof(fc.constantFrom("threshold", "overflow", "manual"), fc.string()),
        format: fc.oneof(fc.constantFrom("auto", "anthropic", "openai"), fc.string()),
        system: fc.jsonValue(),
        conversationId: fc.oneof(fc.string(), fc.integer()),
        callbackUrl: fc.oneof(fc.webUrl(), fc.string(), fc.constantFrom("http://127.0.0.1/", "gopher://x", "http://[::ffff:127.0.0.1]/")),
        usageTokens: fc.oneof(fc.integer(), fc.double()),
        metadata: fc.jsonValue(),
        instructions: fc.oneof(fc.string(), fc.integer()),
        model: fc.oneof(fc.string(), fc.constant("claude-x")),
      },
      { requiredKeys: [] },
    ),
    fc.jsonValue(),
  );
  const payload = fc.oneof(
    { weight: 6, arbitrary: body.map((value) => JSON.stringify(value) ?? "null") },
    { weight: 1, arbitrary: fc.string() },
    { weight: 1, arbitrary: body.map((value) => (JSON.stringify(value) ?? "").slice(0, -1)) },
    { weight: 1, arbitrary: fc.constantFrom('{"__proto__":{"x":1}}', '{"constructor":{"prototype":{"x":1}}}', "\u0000", "{}".repeat(1000)) },
  );
  const route = fc.oneof(
    fc.constant({ method: "POST", url: "/v1/compactions" }),
    fc.constant({ method: "POST", url: "/v1/compactions/batch" }),
    fc.string().map((id) => ({ method: "GET", url: `/v1/compactions/${encodeURIComponent(id)}?wait=${id.length % 3}` })),
    fc.string().map((id) => ({ method: "DELETE", url: `/v1/compactions/${encodeURIComponent(id)}` })),
    fc.string().map((id) => ({ method: "GET", url: `/v1/batches/${encodeURIComponent(id)}` })),
    fc.webPath().map((path) => ({ method: "POST", url: path || "/" })),
  );
  const headers = fc.record(
    {
      authorization: fc.oneof(fc.constant(bearer("acme").authorization), fc.constant("Bearer nope"), fc.string(), fc.constant("Basic x")),
      "content-type": fc.oneof(
        fc.constant("application/json"),
        fc.constant("application/json; charset=utf-8"),
        fc.constantFrom("text/plain", "application/xml", "multipart/form-data", "application/json; charset=latin1"),
      ),
      "idempotency-key": fc.string({ maxLength: 300 }),
    },
    { requiredKeys: ["authorization", "content-type"] },
  );
  return fc
    .tuple(route, payload, headers)
    .map(([{ method, url }, body, hdrs]) => ({ method, url, payload: body, headers: hdrs }) as InjectOptions);
}

describe("fuzzing", () => {
  it("answers thousands of malformed and hostile requests without a 5xx, each error in the one shape", async () => {
    await fc.assert(
      fc.asyncProperty(hostileRequest(), async (request) => {
        let response;
        try {
          response = await app.inject(request);
        } catch (err) {
          // Header values the HTTP layer itself refuses never reach the app.
          if (err instanceof TypeError && /header/i.test(err.message)) return;
          throw err;
        }
        expect(response.statusCode, `${request.method} ${request.url} → ${response.body}`).toBeLessThan(500);
        if (response.statusCode >= 400) {
          const { error } = response.json();
          expect(typeof error.code).toBe("string");
          expect(typeof error.message).toBe("string");
        }
      }),
      { numRuns: 2_500 },
    );
  }, 120_000);
});
