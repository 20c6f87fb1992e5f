import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createHttp2Server, type Http2Server, type Http2ServerRequest, type Http2ServerResponse } from "node:http2";
import type { AddressInfo } from "node:net";
import { BedrockRuntimeClient, ConverseCommand } from "@aws-sdk/client-bedrock-runtime";
import { GoogleGenAI } from "@google/genai";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isOverflowError } from "../../src/core/overflow.js";

/**
 * The self-hosted servers and cloud gateways of the overflow table, replayed on
 * the wire: a local HTTP server answers the way each one does (status, headers,
 * body, or an SSE error event), and the provider's real SDK turns that answer
 * into the error an agent catches. The table in overflow.test.ts pins the
 * wordings; this pins what survives each SDK's error handling.
 */

/** One scripted answer: a JSON error response, or an SSE stream that ends with an error event. */
type Answer =
  | { readonly status: number; readonly headers?: Readonly<Record<string, string>>; readonly json: object }
  | { readonly sseError: object };

let next: Answer = { status: 500, json: {} };

function answer(req: IncomingMessage | Http2ServerRequest, res: ServerResponse | Http2ServerResponse): void {
  req.resume();
  req.on("end", () => {
    const scripted = next;
    if ("sseError" in scripted) {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end(`data: ${JSON.stringify(scripted.sseError)}\n\n`);
      return;
    }
    res.writeHead(scripted.status, { "content-type": "application/json", ...scripted.headers });
    res.end(JSON.stringify(scripted.json));
  });
}

// The Bedrock runtime client speaks HTTP/2 only (its default handler is for
// bidirectional streams), so it gets a cleartext HTTP/2 server of its own.
let server: Server;
let http2Server: Http2Server;
let baseUrl: string;
let http2BaseUrl: string;

beforeAll(async () => {
  server = createServer(answer);
  http2Server = createHttp2Server(answer);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  await new Promise<void>((resolve) => http2Server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  http2BaseUrl = `http://127.0.0.1:${(http2Server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await new Promise<void>((resolve) => http2Server.close(() => resolve()));
});

/** What the call threw when the server gave `answer`. */
async function caught(answer: Answer, call: () => Promise<unknown>): Promise<unknown> {
  next = answer;
  try {
    await call();
  } catch (err) {
    return err;
  }
  throw new Error("the call was expected to fail");
}

const openai = (): OpenAI => new OpenAI({ apiKey: "sk-local", baseURL: `${baseUrl}/v1`, maxRetries: 0 });

const chat = (): Promise<unknown> =>
  openai().chat.completions.create({ model: "served", messages: [{ role: "user", content: "hello" }] });

const streamedChat = async (): Promise<void> => {
  const stream = await openai().chat.completions.create({ model: "served", messages: [{ role: "user", content: "hello" }], stream: true });
  for await (const chunk of stream) void chunk;
};

const converse = (): Promise<unknown> =>
  new BedrockRuntimeClient({
    region: "us-east-1",
    endpoint: http2BaseUrl,
    credentials: { accessKeyId: "AKIDLOCAL", secretAccessKey: "local" },
    maxAttempts: 1,
  }).send(new ConverseCommand({ modelId: "amazon.nova-micro-v1:0", messages: [{ role: "user", content: [{ text: "hello" }] }] }));

const generateContent = (): Promise<unknown> =>
  new GoogleGenAI({ apiKey: "local", httpOptions: { baseUrl } }).models.generateContent({ model: "gemini-2.5-pro", contents: "hello" });

/** Bedrock names the exception in a header; the body carries only the message. */
const bedrockError = (type: string, status: number, message: string): Answer => ({
  status,
  headers: { "x-amzn-errortype": `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/` },
  json: { message },
});

describe("overflow errors as the providers' SDKs throw them", () => {
  it("recognises vLLM's 400 through the openai SDK", async () => {
    const err = await caught(
      {
        status: 400,
        json: {
          error: {
            message:
              "This model's maximum context length is 131072 tokens. However, you requested 8192 output tokens and your prompt contains 125000 input tokens, for a total of 133192 tokens. Please reduce the length of the input prompt or the number of requested output tokens. (parameter=input_tokens, value=125000)",
            type: "BadRequestError",
            param: "input_tokens",
            code: 400,
          },
        },
      },
      chat,
    );
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(isOverflowError(err)).toBe(true);
  });

  it("recognises vLLM's error event in the middle of a stream", async () => {
    const err = await caught(
      {
        sseError: {
          error: {
            message:
              "You passed 31745 input tokens and requested 1024 output tokens. However, the model's context length is only 32768 tokens, resulting in a maximum input length of 31744 tokens. Please reduce the length of the input prompt.",
            type: "BadRequestError",
            param: "input_tokens",
            code: 400,
          },
        },
      },
      streamedChat,
    );
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect(isOverflowError(err)).toBe(true);
  });

  it("recognises TGI's 422, whose error is a bare string", async () => {
    const err = await caught(
      {
        status: 422,
        json: {
          error: "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 8192. Given: 6204 `inputs` tokens and 2047 `max_new_tokens`",
          error_type: "validation",
        },
      },
      chat,
    );
    expect(err).toBeInstanceOf(OpenAI.UnprocessableEntityError);
    expect(isOverflowError(err)).toBe(true);
  });

  it("cannot see Xinference's {detail} body, which the openai SDK drops, and does not guess from the 500", async () => {
    const err = await caught(
      {
        status: 500,
        json: { detail: "[address=0.0.0.0:43769, pid=1065] The decoder prompt (length 66501) is longer than the maximum model length of 65536." },
      },
      chat,
    );
    expect(err).toBeInstanceOf(OpenAI.InternalServerError);
    expect((err as Error).message).toBe("500 status code (no body)");
    expect(isOverflowError(err)).toBe(false);
  });

  it("recognises Bedrock Nova's ValidationException", async () => {
    const err = await caught(
      bedrockError(
        "ValidationException",
        400,
        "The model returned the following errors: Input Tokens Exceeded: Number of input tokens exceeds maximum length. Please update the input to try again.",
      ),
      converse,
    );
    expect((err as Error).name).toBe("ValidationException");
    expect(isOverflowError(err)).toBe(true);
  });

  it("does not mistake Bedrock's ThrottlingException for an overflow", async () => {
    const err = await caught(bedrockError("ThrottlingException", 429, "Too many tokens, please wait before trying again."), converse);
    expect((err as Error).name).toBe("ThrottlingException");
    expect(isOverflowError(err)).toBe(false);
  });

  it("recognises Gemini's INVALID_ARGUMENT through @google/genai", async () => {
    const err = await caught(
      {
        status: 400,
        json: {
          error: {
            code: 400,
            message: "The input token count (1200293) exceeds the maximum number of tokens allowed (1048576).",
            status: "INVALID_ARGUMENT",
          },
        },
      },
      generateContent,
    );
    expect((err as Error).name).toBe("ApiError");
    expect(isOverflowError(err)).toBe(true);
  });

  it("does not take Gemini's payload byte limit for an overflow", async () => {
    const err = await caught(
      { status: 400, json: { error: { code: 400, message: "Request payload size exceeds the limit: 20971520 bytes.", status: "INVALID_ARGUMENT" } } },
      generateContent,
    );
    expect((err as Error).name).toBe("ApiError");
    expect(isOverflowError(err)).toBe(false);
  });
});
