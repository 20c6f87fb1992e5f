import Anthropic from "@anthropic-ai/sdk";
import { afterEach, describe, expect, it } from "vitest";
import { DEFAULT_REPLY_TEXT, startFakeAnthropic, type FakeAnthropic } from "./fakeAnthropic.js";

let fake: FakeAnthropic | undefined;

afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

function client(url: string): Anthropic {
  return new Anthropic({ apiKey: "sk-ant-test", baseURL: url, maxRetries: 0 });
}

const BODY = { model: "claude-test", max_tokens: 100, messages: [{ role: "user" as const, content: "hi" }] };

async function post(url: string, body: unknown): Promise<Response> {
  return fetch(`${url}/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

describe("the fake Anthropic server", () => {
  it("answers a non-streaming request with a Message the SDK parses", async () => {
    fake = await startFakeAnthropic({
      script: [{ kind: "reply", text: "hello", thinking: "hmm", stopReason: "max_tokens", inputTokens: 7, outputTokens: 3 }],
    });

    const message = await client(fake.url).messages.create(BODY);

    expect(message.content.map((block) => block.type)).toEqual(["thinking", "text"]);
    expect(message.content[1]).toMatchObject({ type: "text", text: "hello" });
    expect(message.stop_reason).toBe("max_tokens");
    expect(message.usage).toMatchObject({ input_tokens: 7, output_tokens: 3 });
    expect(message.model).toBe("claude-test");
  });

  it("streams the API's event sequence, ending with message_stop", async () => {
    fake = await startFakeAnthropic({ script: [{ kind: "reply", text: "ab", chunks: 2 }] });

    const response = await post(fake.url, { ...BODY, stream: true });
    const names = [...(await response.text()).matchAll(/^event: (\w+)$/gm)].map((m) => m[1]);

    expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
    expect(names).toEqual([
      "message_start",
      "ping",
      "content_block_start",
      "content_block_delta",
      "content_block_delta",
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
  });

  it("sends errors in the API's shape with request-id and retry headers", async () => {
    fake = await startFakeAnthropic({ script: [{ kind: "error", status: 429 }] });

    const response = await post(fake.url, BODY);

    expect(response.status).toBe(429);
    expect(response.headers.get("retry-after")).toBe("0");
    expect(response.headers.get("request-id")).toMatch(/^req_/);
    expect(await response.json()).toMatchObject({ type: "error", error: { type: "rate_limit_error" } });
  });

  it("refuses a body holding a lone surrogate with invalid_request_error, as the API does, and does not record it", async () => {
    fake = await startFakeAnthropic();
    const body = { ...BODY, messages: [{ role: "user", content: "broken \ud800 bytes" }] };
    expect(JSON.stringify(body)).toContain("\\ud800");

    const refused = await post(fake.url, body);
    const paired = await post(fake.url, { ...BODY, messages: [{ role: "user", content: "a pair \ud83d\ude00 is fine" }] });

    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ error: { type: "invalid_request_error", message: expect.stringContaining("no low surrogate") } });
    expect(paired.status).toBe(200);
    expect(fake.requests).toHaveLength(1);
  });

  it("answers an unknown path with not_found_error and does not record it", async () => {
    fake = await startFakeAnthropic();

    const response = await fetch(`${fake.url}/v1/complete`, { method: "POST", body: "{}" });

    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ type: "error", error: { type: "not_found_error" } });
    expect(fake.requests).toHaveLength(0);
  });

  it("serves many concurrent streams, each from the script function", async () => {
    fake = await startFakeAnthropic({
      script: (request) => ({ kind: "reply", text: `echo ${request.userText}`, chunks: 3, delayMs: 2 }),
    });
    const anthropic = client(fake.url);

    const texts = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        anthropic.messages
          .stream({ ...BODY, messages: [{ role: "user" as const, content: `request ${i}` }] })
          .finalText(),
      ),
    );

    expect(texts).toEqual(Array.from({ length: 60 }, (_, i) => `echo request ${i}`));
    expect(new Set(fake.requests.map((r) => r.n)).size).toBe(60);
  });

  it("serves the queue in order and then the default reply", async () => {
    fake = await startFakeAnthropic({ script: [{ kind: "reply", text: "first" }] });
    const anthropic = client(fake.url);

    const first = await anthropic.messages.stream(BODY).finalText();
    const second = await anthropic.messages.stream(BODY).finalText();

    expect([first, second]).toEqual(["first", DEFAULT_REPLY_TEXT]);
  });

  it("closes without waiting for stalled, silent or slow responses", async () => {
    fake = await startFakeAnthropic({
      script: [{ kind: "stall", afterEvents: 2 }, { kind: "silent" }, { kind: "reply", pings: 1000, delayMs: 1000 }],
    });
    const responses = [post(fake.url, { ...BODY, stream: true }), post(fake.url, BODY), post(fake.url, { ...BODY, stream: true })];
    while (fake.requests.length < 3) await new Promise((resolve) => setTimeout(resolve, 5));

    const closing = fake.close().then(() => "closed");
    fake = undefined;
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise((resolve) => (timer = setTimeout(resolve, 5000, "still open")));
    expect(await Promise.race([closing, bound])).toBe("closed");
    clearTimeout(timer);

    // Each client sees its connection broken, none a complete answer.
    const settled = await Promise.allSettled(responses.map(async (r) => (await r).text()));
    expect(settled.map((s) => s.status)).toEqual(["rejected", "rejected", "rejected"]);
  });
});
