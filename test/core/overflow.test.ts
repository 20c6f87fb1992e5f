import {
  APIConnectionError,
  APIConnectionTimeoutError,
  APIError,
  APIUserAbortError,
  AuthenticationError,
  BadRequestError,
  ContentTooLargeError,
  OverloadedError,
  RateLimitError,
} from "@anthropic-ai/sdk";
import { ThrottlingException, ValidationException } from "@aws-sdk/client-bedrock-runtime";
import { ApiError as GenaiApiError } from "@google/genai";
import { APIError as OpenAIAPIError } from "openai";
import { describe, expect, it } from "vitest";
import { isOverflowError } from "../../src/core/overflow.js";

// Builders for the shapes errors really arrive in. Wordings are the providers' own.

const headers = (): Headers => new Headers({ "request-id": "req_011CSPPiTdw23HFj1vvSCyHv" });

/** The body Anthropic (and Anthropic-compatible endpoints) send with an error. */
const anthropicBody = (type: string, message: string): object => ({
  type: "error",
  error: { type, message },
  request_id: "req_011CSPPiTdw23HFj1vvSCyHv",
});

/** What `@anthropic-ai/sdk` throws for an HTTP error status. */
const anthropicSdkError = (status: number, body: object | undefined): APIError =>
  APIError.generate(status, body, undefined, headers());

/** An OpenAI-style error body (OpenAI, Azure, DeepSeek, Groq, most compatible servers). */
const openAiBody = (message: string, code: string | number | null, type = "invalid_request_error"): object => ({
  error: { message, type, param: "messages", code },
});

/** The shape OpenAI-compatible SDKs throw: status, the body's `error`, and the message with the status in front. */
const openAiSdkError = (status: number, body: { error: { message: string; code?: unknown; type?: string } }): Error =>
  Object.assign(new Error(`${status} ${body.error.message}`), {
    status,
    error: body.error,
    code: body.error.code,
    type: body.error.type,
  });

/** An AWS SDK v3 exception as the Bedrock runtime client throws it. */
const awsError = (name: string, message: string, httpStatusCode: number, extra: object = {}): Error =>
  Object.assign(new Error(message), {
    name,
    $fault: "client",
    $metadata: { httpStatusCode, requestId: "16fb0962-139d-4c70-ba9c-602d9630e854", attempts: 1 },
    ...extra,
  });

/** What the `openai` JS SDK throws for an HTTP error status, built by the SDK itself from the body. */
const openAiClientError = (status: number, body: object): Error =>
  OpenAIAPIError.generate(status, body, undefined, new Headers({ "x-request-id": "req_7f3a" }));

type BedrockExceptionClass = typeof ValidationException | typeof ThrottlingException;

/** A Bedrock runtime exception, built with the SDK's own class. */
const bedrockException = (Exception: BedrockExceptionClass, message: string, httpStatusCode: number): Error =>
  new Exception({
    message,
    $metadata: { httpStatusCode, requestId: "9f1c2d3e-4b5a-6789-0abc-def012345678", attempts: 1 },
  });

/** What `@google/genai` throws for an HTTP error status: the body as JSON in the message. */
const genaiError = (status: number, body: object): Error => new GenaiApiError({ message: JSON.stringify(body), status });

interface Case {
  readonly name: string;
  readonly err: unknown;
}

const PROMPT_TOO_LONG = "prompt is too long: 213462 tokens > 200000 maximum";

const overflows: readonly Case[] = [
  // Anthropic
  {
    name: "Anthropic 400 prompt is too long, as the SDK's BadRequestError",
    err: anthropicSdkError(400, anthropicBody("invalid_request_error", PROMPT_TOO_LONG)),
  },
  {
    name: "Anthropic input length plus max_tokens over the window",
    err: anthropicSdkError(
      400,
      anthropicBody(
        "invalid_request_error",
        "input length and `max_tokens` exceed context limit: 197626 + 21333 > 200000, decrease input length or `max_tokens` and try again",
      ),
    ),
  },
  {
    name: "Anthropic 413 that names the window",
    err: anthropicSdkError(413, anthropicBody("invalid_request_error", "Request size exceeds model context window")),
  },
  {
    name: "Anthropic error event in the middle of a stream (an APIError with no status)",
    err: new APIError(undefined, anthropicBody("invalid_request_error", PROMPT_TOO_LONG), undefined, headers()),
  },
  {
    name: "Anthropic SDK error flattened into a log string",
    err: 'Error: 400 {"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 205414 tokens > 200000 maximum"},"request_id":"req_011CSMhDpvdFbyohqyoshsYg"}',
  },
  // OpenAI and Azure
  {
    name: "OpenAI context_length_exceeded, as an SDK error",
    err: openAiSdkError(
      400,
      openAiBody(
        "This model's maximum context length is 128000 tokens. However, your messages resulted in 204308 tokens. Please reduce the length of the messages.",
        "context_length_exceeded",
      ) as never,
    ),
  },
  {
    name: "OpenAI Responses API stream error event",
    err: {
      type: "error",
      code: "context_length_exceeded",
      message: "Your input exceeds the context window of this model. Please adjust your input and try again.",
      param: "input",
      sequence_number: 2,
    },
  },
  {
    name: "OpenAI Responses API response.failed event",
    err: {
      type: "response.failed",
      sequence_number: 3,
      response: {
        id: "resp_68ae",
        status: "failed",
        error: { code: "context_length_exceeded", message: "Your input exceeds the context window of this model. Please adjust your input and try again." },
      },
    },
  },
  {
    name: "Azure OpenAI body whose message is generic but whose code is context_length_exceeded",
    err: { status: 400, error: { code: "context_length_exceeded", message: "The request was rejected.", param: "messages", type: "invalid_request_error" } },
  },
  // Amazon Bedrock
  {
    name: "Bedrock ValidationException",
    err: awsError("ValidationException", "Input is too long for requested model.", 400),
  },
  {
    name: "Bedrock error inside an HTTP 200 event stream",
    err: awsError("ValidationException", "The model returned the following errors: Input is too long for requested model.", 200),
  },
  {
    name: "Bedrock model stream error wrapping Claude's wording",
    err: awsError("ModelStreamErrorException", "The model returned the following errors: prompt is too long: 903884 tokens > 200000 maximum", 200, {
      originalStatusCode: 400,
      originalMessage: "prompt is too long: 903884 tokens > 200000 maximum",
    }),
  },
  {
    name: "Bedrock Converse input plus max_tokens",
    err: "ValidationException: An error occurred (ValidationException) when calling the ConverseStream operation: input length and `max_tokens` exceed context limit: 199759 + 8192 > 200000, decrease input length or `max_tokens` and try again",
  },
  {
    name: "Bedrock total text bytes",
    err: awsError("ValidationException", "too many total text bytes", 400),
  },
  // Google Gemini and Vertex AI
  {
    name: "Gemini INVALID_ARGUMENT body",
    err: Object.assign(
      new Error('{"error":{"code":400,"message":"The input token count (1196265) exceeds the maximum number of tokens allowed (1048575).","status":"INVALID_ARGUMENT"}}'),
      { status: 400 },
    ),
  },
  {
    name: "Gemini body nested as a JSON string inside another body",
    err: {
      error: {
        message:
          '{\n  "error": {\n    "code": 400,\n    "message": "The input token count (1091639) exceeds the maximum number of tokens allowed (1048576).",\n    "status": "INVALID_ARGUMENT"\n  }\n}\n',
        code: 400,
        status: "Bad Request",
      },
    },
  },
  {
    name: "Gemini array body in a string",
    err: '[{"error":{"code":400,"message":"The input token count (314175) exceeds the maximum number of tokens allowed (131072).","errors":[{"domain":"global","reason":"badRequest"}],"status":"INVALID_ARGUMENT"}}]',
  },
  {
    name: "Vertex AI, whose wording mentions billable characters",
    err: "Failed to generate content: Unable to submit request because the input token count is 1251952 but model only supports up to 1048576. Reduce the input token count and try again. You can also use the CountTokens API to calculate prompt token count and billable characters.",
  },
  // The rest of the field
  {
    name: "Mistral",
    err: openAiSdkError(400, { error: { message: "Prompt contains 300000 tokens, too large for model with 131072 maximum context length", type: "invalid_request_message_error" } }),
  },
  {
    name: "Groq",
    err: openAiSdkError(400, openAiBody("Please reduce the length of the messages or completion.", "context_length_exceeded") as never),
  },
  {
    name: "Cerebras with a body",
    err: "400 Please reduce the length of the messages or completion. Current length is 42328 while limit is 40000",
  },
  {
    name: "xAI",
    err: openAiSdkError(400, { error: { message: "This model's maximum prompt length is 131072 but the request contains 136973 tokens." } }),
  },
  {
    name: "DeepSeek",
    err: openAiSdkError(
      400,
      openAiBody(
        "This model's maximum context length is 65536 tokens. However, you requested 69648 tokens (69648 in the messages, 0 in the completion). Please reduce the length of the messages or completion.",
        "invalid_request_error",
      ) as never,
    ),
  },
  {
    name: "OpenRouter",
    err: openAiSdkError(
      400,
      openAiBody(
        'This endpoint\'s maximum context length is 200000 tokens. However, you requested about 250112 tokens (250112 of text input). Please reduce the length of either one, or use the "middle-out" transform to compress your prompt automatically.',
        400,
      ) as never,
    ),
  },
  {
    name: "OpenRouter passing on the upstream body in metadata.raw, inside a log line",
    err: new Error(
      'Failed to create completion message: {"error":{"message":"Provider returned error","code":413,"metadata":{"raw":"{\\"type\\":\\"error\\",\\"error\\":{\\"type\\":\\"invalid_request_error\\",\\"message\\":\\"Prompt is too long\\"}}","provider_name":"Google"}}}',
    ),
  },
  {
    name: "OpenRouter metadata.raw as a body field, with a 400 status",
    err: {
      status: 400,
      error: {
        message: "Provider returned error",
        code: 400,
        metadata: { raw: JSON.stringify(anthropicBody("invalid_request_error", PROMPT_TOO_LONG)), provider_name: "Anthropic" },
      },
    },
  },
  {
    name: "Together",
    err: "The input (265330 tokens) is longer than the model's context length (262144 tokens).",
  },
  {
    name: "Together's text-generation-inference backend",
    err: "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 32769. Given: 40000 `inputs` tokens and 512 `max_new_tokens`",
  },
  {
    name: "z.ai / Zhipu code 1261",
    err: 'Z.AI API error (400 Bad Request): {"error":{"code":"1261","message":"Prompt exceeds max length"}}',
  },
  {
    name: "z.ai finish reason surfaced as an error",
    err: new Error("stream ended with finish_reason model_context_window_exceeded"),
  },
  {
    name: "Kimi / Moonshot, in a Python-style body that is not JSON",
    err: "Error code: 400 - {'error': {'message': 'Invalid request: Your request exceeded model token limit: 262144 (requested: 269030)', 'type': 'invalid_request_error'}}",
  },
  {
    name: "MiniMax through its Anthropic-compatible endpoint and the SDK",
    err: anthropicSdkError(400, anthropicBody("bad_request_error", "invalid params, context window exceeds limit (2013)")),
  },
  {
    name: "Qwen / DashScope",
    err: "Error code: 400 - {'error': {'code': 'invalid_parameter_error', 'message': '<400> InternalError.Algo.InvalidParameter: Range of input length should be [1, 983616]', 'param': None, 'type': 'invalid_request_error'}}",
  },
  {
    name: "GitHub Copilot",
    err: 'Request Failed: 400 {"error":{"message":"prompt token count of 138898 exceeds the limit of 64000","code":"model_max_prompt_tokens_exceeded"}}',
  },
  {
    name: "llama.cpp server (the body it once sent with HTTP 200 while streaming)",
    err: {
      error: {
        code: 500,
        message: "the request exceeds the available context size. try increasing the context size or enable context shift",
        type: "exceed_context_size_error",
        n_prompt_tokens: 14429,
        n_ctx: 8192,
      },
    },
  },
  {
    name: "vLLM",
    err: {
      object: "error",
      message:
        "This model's maximum context length is 16384 tokens. However, you requested 122946 tokens (112946 in the messages, 10000 in the completion). Please reduce the length of the messages or completion.",
      type: "BadRequestError",
      param: null,
      code: 400,
    },
  },
  {
    name: "vLLM's combined input plus max_tokens check, which names the input",
    err: "'max_tokens' or 'max_completion_tokens' is too large: 2045. This model's maximum context length is 2048 tokens and your request has 8 input tokens (2045 > 2048 - 8). (parameter=max_tokens, value=2045)",
  },
  {
    name: "vLLM prompt too long to fit",
    err: "ValueError: The prompt (total length 25938) is too long to fit into the model (context length 4096).",
  },
  {
    name: "LM Studio",
    err: "Trying to keep the first 111490 tokens when context the overflows. However, the model is loaded with context length of only 32768 tokens, which is not enough.",
  },
  {
    name: "LM Studio, older wording",
    err: "tokens to keep from the initial prompt is greater than the context length",
  },
  {
    name: "Ollama, as its client's ResponseError",
    err: Object.assign(new Error("prompt too long; exceeded max context length by 4096 tokens"), {
      name: "ResponseError",
      error: "prompt too long; exceeded max context length by 4096 tokens",
      status_code: 400,
    }),
  },
  {
    name: "LiteLLM's mapped exception",
    err: "litellm.ContextWindowExceededError: litellm.BadRequestError: AnthropicException - Request was rejected",
  },
  // Self-hosted servers and cloud gateways. Each wording is quoted from the server's own source or
  // docs where it has them, and from a user's report of the error where the server is closed.
  //
  // vLLM, OpenAI-compatible server. vllm-project/vllm: vllm/entrypoints/openai/serving_engine.py
  // (up to 0.10: top-level ErrorResponse body, "you requested N tokens (P in the messages, C in the
  // completion)"), vllm/entrypoints/openai/engine/serving.py (0.18 on: "you requested C output tokens
  // and your prompt contains [at least] P input tokens"), vllm/renderers/params.py (_token_len_check,
  // _text_len_check: "You passed P input tokens ... context length is only W tokens"); all raise
  // VLLMValidationError, which the server answers with 400 BadRequestError and "(parameter=..., value=...)".
  {
    name: "vLLM 0.18+ prompt plus output tokens over max_model_len, through the openai SDK",
    err: openAiClientError(400, {
      error: {
        message:
          "This model's maximum context length is 16384 tokens. However, you requested 8192 output tokens and your prompt contains at least 8193 input tokens, for a total of at least 16385 tokens. Please reduce the length of the input prompt or the number of requested output tokens. (parameter=input_tokens, value=8193)",
        type: "BadRequestError",
        param: "input_tokens",
        code: 400,
      },
    }),
  },
  {
    name: "vLLM's character pre-check, which refuses before tokenizing",
    err: openAiClientError(400, {
      error: {
        message:
          "This model's maximum context length is 32768 tokens. However, you requested 32768 output tokens and your prompt contains 31800 characters (more than 0 characters, which is the upper bound for 0 input tokens). Please reduce the length of the input prompt or the number of requested output tokens. (parameter=input_text, value=31800)",
        type: "BadRequestError",
        param: "input_text",
        code: 400,
      },
    }),
  },
  {
    name: "vLLM's renderer token check",
    err: openAiClientError(400, {
      error: {
        message:
          "You passed 31745 input tokens and requested 1024 output tokens. However, the model's context length is only 32768 tokens, resulting in a maximum input length of 31744 tokens. Please reduce the length of the input prompt. (parameter=input_tokens, value=31745)",
        type: "BadRequestError",
        param: "input_tokens",
        code: 400,
      },
    }),
  },
  {
    name: "vLLM's renderer character check",
    err: "You passed 200000 input characters and requested 2048 output tokens. However, the model's context length is only 32768 tokens, resulting in a maximum input length of 30720 tokens (at most 184320 characters). Please reduce the length of the input prompt. (parameter=input_text, value=200000)",
  },
  {
    name: "vLLM through the Python openai SDK, logged as a Python dict",
    err: "Error code: 400 - {'error': {'message': \"This model's maximum context length is 16384 tokens. However, your request has 16385 input tokens. Please reduce the length of the input messages. (parameter=input_tokens, value=16385)\", 'type': 'BadRequestError', 'param': 'input_tokens', 'code': 400}}",
  },
  {
    name: "vLLM through LiteLLM's hosted_vllm provider",
    err: "400 litellm.BadRequestError: Hosted_vllmException - {\"error\":{\"message\":\"You passed 147421 input tokens and requested 16384 output tokens. However, the model's context length is only 163804 tokens, resulting in a maximum input length of 147420 tokens. Please reduce the length of the input prompt.\"}}",
  },
  // vLLM engine errors, raised from the engine rather than the HTTP layer (offline LLM, Ray, wrappers).
  // vllm-project/vllm: vllm/v1/engine/input_processor.py (_validate_prompt_len), older
  // vllm/v1/engine/processor.py ("Prompt length of N is longer than the maximum model length of M").
  {
    name: "vLLM engine: decoder prompt longer than max_model_len",
    err: new Error(
      "The decoder prompt (length 66501) is longer than the maximum model length of 65536. Make sure that `max_model_len` is no smaller than the number of text tokens.",
    ),
  },
  {
    name: "vLLM engine: a multimodal prompt, whose hint talks about images without being an oversized image",
    err: new Error(
      "The decoder prompt (length 8825) is longer than the maximum model length of 8192. Make sure that `max_model_len` is no smaller than the number of text tokens plus multimodal tokens. For image inputs, the number of image tokens depends on the number of images, and possibly their aspect ratios as well.",
    ),
  },
  {
    name: "vLLM engine: a prompt that leaves no room for one output token",
    err: new Error(
      "The decoder prompt (length 4096) plus the number of requested output tokens (at least 1) is longer than the maximum model length of 4096. Make sure that `max_model_len` is no smaller than the number of text tokens (prompt + requested output tokens).",
    ),
  },
  {
    name: "vLLM engine, early V1 wording",
    err: "ValueError: Prompt length of 5016 is longer than the maximum model length of 4096.",
  },
  // Xinference running vLLM: xorbitsai/inference xinference/api/restful_api.py answers an engine
  // exception with HTTP 500 and {"detail": str(e)}, the actor's address in front (langchain-ai/deepagents#468,
  // xorbitsai/inference#3785); the stream path sends {"error": str(e)} as an SSE event.
  {
    name: "Xinference wrapping vLLM, through the Python openai SDK",
    err: "openai.InternalServerError: Error code: 500 - {'detail': '[address=0.0.0.0:43769, pid=1065] The decoder prompt (length 66501) is longer than the maximum model length of 65536. Make sure that `max_model_len` is no smaller than the number of text tokens.'}",
  },
  {
    name: "Xinference's body, as a fetch-based client keeps it",
    err: {
      status: 500,
      body: { detail: "[address=0.0.0.0:39473, pid=2231] The decoder prompt (length 21535) is longer than the maximum model length of 16384" },
    },
  },
  {
    name: "Xinference's stream error event",
    err: { error: "[address=0.0.0.0:39473, pid=2231] The decoder prompt (length 21535) is longer than the maximum model length of 16384" },
  },
  // Hugging Face text-generation-inference: huggingface/text-generation-inference router/src/validation.rs
  // (ValidationError::MaxTotalTokens, ::InputLength) behind router/src/infer/mod.rs "Input validation
  // error: {0}", answered with 422 {"error", "error_type": "validation"}. Together served the same
  // wording (stanford-crfm/helm#2079), as does the HF Inference API (huggingface/chat-ui#1149).
  {
    name: "TGI 422, through the openai SDK (its messages API is OpenAI-compatible)",
    err: openAiClientError(422, {
      error: "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 65537. Given: 79993 `inputs` tokens and 1024 `max_new_tokens`",
      error_type: "validation",
    }),
  },
  {
    name: "TGI input alone over max-input-tokens",
    err: {
      status: 422,
      error: "Input validation error: `inputs` must have less than 4095 tokens. Given: 5210",
      error_type: "validation",
    },
  },
  {
    name: "TGI through huggingface_hub",
    err: "huggingface_hub.errors.ValidationError: Input validation error: `inputs` tokens + `max_new_tokens` must be <= 32768. Given: 32001 `inputs` tokens and 1024 `max_new_tokens`",
  },
  {
    name: "TGI's OpenAI-style stream error event",
    err: {
      error: {
        message: "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 8192. Given: 6204 `inputs` tokens and 2047 `max_new_tokens`",
        http_status_code: 422,
      },
    },
  },
  {
    name: "Together relaying TGI's wording in an OpenAI-style body",
    err: openAiClientError(400, {
      error: {
        message: "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 2048. Given: 2019 `inputs` tokens and 30 `max_new_tokens`",
        type: "invalid_request_error",
        param: null,
        code: null,
      },
    }),
  },
  // Amazon Bedrock, as @aws-sdk/client-bedrock-runtime throws it. Nova's wording comes mid-stream in
  // ConverseStream (HTTP 200) and from Converse (recorded by stdapi-ai/stdapi.ai's overflow tests and by
  // users of strands-agents); Titan's and Mistral's InvokeModel validation (pkdone/paul-genai-test-tools-ts
  // recorded both); Llama's is vLLM-like (Bedrock docs: ValidationException, HTTP 400).
  {
    name: "Bedrock Nova through Converse",
    err: bedrockException(
      ValidationException,
      "The model returned the following errors: Input Tokens Exceeded: Number of input tokens exceeds maximum length. Please update the input to try again.",
      400,
    ),
  },
  {
    name: "Bedrock Nova inside a ConverseStream (HTTP 200)",
    err: bedrockException(
      ValidationException,
      "The model returned the following errors: Input Tokens Exceeded: Number of input tokens exceeds maximum length. Please update the input to try again.",
      200,
    ),
  },
  {
    name: "Bedrock Nova as boto3 logs it",
    err: "An error occurred (validationException) when calling the ConverseStream operation: The model returned the following errors: Input Tokens Exceeded: Number of input tokens exceeds maximum length. Please update the input to try again.",
  },
  {
    name: "Bedrock Titan through InvokeModel",
    err: bedrockException(ValidationException, "400 Bad Request: Too many input tokens. Max input tokens: 4096, request input token count: 7262 ", 400),
  },
  {
    name: "Bedrock Mistral through InvokeModel",
    err: "ValidationException: 400 Bad Request: Too many input tokens. Max input tokens: 8192, request input token count: 9279 ",
  },
  {
    name: "Bedrock Llama",
    err: bedrockException(
      ValidationException,
      "The model returned the following errors: This model's maximum context length is 8192 tokens. Please reduce the length of the prompt",
      400,
    ),
  },
  {
    name: "gpt-oss on Bedrock",
    err: bedrockException(
      ValidationException,
      "The model returned the following errors: Input length (195071) exceeds model's maximum context length (131072).",
      400,
    ),
  },
  // Google Gemini. googleapis/js-genai src/_api_client.ts (throwErrorIfNotOK) throws ApiError with the
  // JSON body as its message; wordings from google-gemini/gemini-cli#6678, #12098 and
  // googleapis/python-genai#2466 (which also shows Vertex AI answering with the same sentence).
  {
    name: "Gemini, as @google/genai's ApiError",
    err: genaiError(400, {
      error: {
        code: 400,
        message: "The input token count (1200293) exceeds the maximum number of tokens allowed (1048576).",
        status: "INVALID_ARGUMENT",
      },
    }),
  },
  {
    name: "Gemini's wording without the count",
    err: genaiError(400, {
      error: { code: 400, message: "The input token count exceeds the maximum number of tokens allowed (1048576).", status: "INVALID_ARGUMENT" },
    }),
  },
  {
    name: "Gemini through the Python SDK",
    err: "google.genai.errors.ClientError: 400 INVALID_ARGUMENT. {'error': {'code': 400, 'message': 'The input token count (81881) exceeds the maximum number of tokens allowed (65536).', 'status': 'INVALID_ARGUMENT'}}",
  },
  {
    name: "Gemini through the older @google/generative-ai SDK",
    err: Object.assign(
      new Error(
        "[GoogleGenerativeAI Error]: Error fetching from https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-pro:generateContent: [400 Bad Request] The input token count (1196265) exceeds the maximum number of tokens allowed (1048575).",
      ),
      { status: 400, statusText: "Bad Request", errorDetails: [] },
    ),
  },
  // Vertex AI. The docs' error table (cloud.google.com/vertex-ai/generative-ai/docs/model-reference/api-errors)
  // puts "Request exceeds the model's input token limit" under a plain 400 INVALID_ARGUMENT: clients
  // that keep only the status line lose the reason, which then sits only in the structured body.
  {
    name: "Vertex AI through gaxios (google-auth-library): a bare 400 line, the reason only in response.data",
    err: Object.assign(new Error("Request failed with status code 400"), {
      name: "GaxiosError",
      code: "400",
      config: {
        url: "https://us-central1-aiplatform.googleapis.com/v1/projects/p/locations/us-central1/publishers/google/models/gemini-2.5-pro:generateContent",
        method: "POST",
        data: { contents: [{ role: "user", parts: [{ text: "summarise the log" }] }] },
      },
      response: {
        status: 400,
        statusText: "Bad Request",
        data: {
          error: {
            code: 400,
            message: "Unable to submit request because the input token count is 1251952 but model only supports up to 1048576. Reduce the input token count and try again.",
            status: "INVALID_ARGUMENT",
          },
        },
      },
    }),
  },
  {
    name: "Vertex AI through @google-cloud/vertexai: the reason on the GoogleApiError cause",
    err: Object.assign(new Error("[VertexAI.ClientError]: got status: 400 Bad Request."), {
      name: "ClientError",
      cause: Object.assign(new Error("The input token count (1091639) exceeds the maximum number of tokens allowed (1048576)."), {
        name: "GoogleApiError",
        code: 400,
        status: "INVALID_ARGUMENT",
        errorDetails: [],
      }),
    }),
  },
  {
    name: "Vertex AI's status line with its body, as LangChain's fetch path reports it",
    err: 'Google request failed with status code 400: {"error":{"code":400,"message":"The input token count (1048577) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}',
  },
];

/**
 * The wordings alone, as plain text with no status and no error code, so that
 * each one is recognised by its words and not by something else in the error.
 */
const wordings: readonly (readonly [provider: string, text: string])[] = [
  ["Anthropic", "prompt is too long: 213462 tokens > 200000 maximum"],
  ["Anthropic input plus max_tokens", "input length and `max_tokens` exceed context limit: 188240 + 21333 > 200000, decrease input length or `max_tokens` and try again"],
  ["Anthropic 413 that names the window", "Request size exceeds model context window"],
  ["OpenAI error code", "context_length_exceeded"],
  ["OpenAI Responses API", "Your input exceeds the context window of this model. Please adjust your input and try again."],
  ["llama-cpp-python", "Requested tokens (2285) exceed context window of 2048"],
  ["OpenAI legacy", "This model's maximum context length is 4097 tokens, however you requested 4226 tokens (3860 in your prompt; 366 for the completion)."],
  ["Bedrock", "Input is too long for requested model."],
  ["Bedrock text bytes", "too many total text bytes"],
  ["Gemini", "The input token count (1196265) exceeds the maximum number of tokens allowed (1048575)."],
  ["Vertex AI", "Unable to submit request because the input token count is 1251952 but model only supports up to 1048576."],
  ["Mistral", "Prompt contains 300000 tokens, too large for model with 131072 maximum context length"],
  ["Groq", "Please reduce the length of the messages or completion."],
  ["xAI", "This model's maximum prompt length is 131072 but the request contains 537812 tokens."],
  ["Together", "The input (265330 tokens) is longer than the model's context length (262144 tokens)."],
  ["Together (TGI)", "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 2048. Given: 3474 `inputs` tokens and 60 `max_new_tokens`"],
  ["z.ai / Zhipu", "Prompt exceeds max length"],
  ["z.ai finish reason", "model_context_window_exceeded"],
  ["Kimi / Moonshot", "Your request exceeded model token limit: 262144 (requested: 300000)"],
  ["MiniMax", "invalid params, context window exceeds limit (2013)"],
  ["Qwen / DashScope", "<400> InternalError.Algo.InvalidParameter: Range of input length should be [1, 30720]"],
  ["Volcano Engine", "Input length 203743 exceeds the maximum length 202752"],
  ["GitHub Copilot", "prompt token count of 146270 exceeds the limit of 128000"],
  ["GitHub Copilot error code", "model_max_prompt_tokens_exceeded"],
  ["llama.cpp", "the request exceeds the available context size, try increasing it"],
  ["llama.cpp error type", "exceed_context_size_error"],
  ["llama.cpp, newer", "request (5000 tokens) exceeds context size (4096 tokens)"],
  ["vLLM", "The prompt (total length 25938) is too long to fit into the model (context length 4096)."],
  ["LM Studio", "tokens to keep from the initial prompt is greater than the context length"],
  ["LM Studio, newer", "However, the model is loaded with context length of only 32768 tokens, which is not enough."],
  ["Ollama", "prompt too long; exceeded max context length by 4096 tokens"],
  ["Ollama embeddings", "the input length exceeds the context length"],
  ["LiteLLM exception name", "ContextWindowExceededError"],
  ["OpenRouter / Poolside", "Input length 265330 exceeds the maximum allowed input length of 262144 tokens."],
  ["LiteLLM-mapped servers", "The input exceeds the model's maximum context limit of 8192 tokens."],
  ["DS4", "Prompt has 300,000 tokens, but the configured context size is 131,072 tokens"],
  ["Bedrock Titan", "Too many input tokens. Max input tokens: 8192, request input token count: 9000"],
  ["vLLM 0.18+", "This model's maximum context length is 32768 tokens. However, you requested 4096 output tokens and your prompt contains 28700 input tokens, for a total of 32796 tokens."],
  ["vLLM renderer", "You passed 30721 input tokens and requested 2048 output tokens. However, the model's context length is only 32768 tokens, resulting in a maximum input length of 30720 tokens."],
  ["vLLM engine", "The decoder prompt (length 21535) is longer than the maximum model length of 16384."],
  ["vLLM early V1 engine", "Prompt length of 5016 is longer than the maximum model length of 4096."],
  ["TGI input length", "Input validation error: `inputs` must have less than 1024 tokens. Given: 1500"],
  ["Bedrock Nova", "Input Tokens Exceeded: Number of input tokens exceeds maximum length. Please update the input to try again."],
  ["gpt-oss on Bedrock", "Input length (195071) exceeds model's maximum context length (131072)."],
  ["OpenAI-compatible proxies", "Requested token count exceeds the model's maximum context length of 131072 tokens"],
  // The generic fallback both peers of this package match (pi's overflow.ts, WeKnora's compaction package):
  // with the per-minute and quota look-alikes excluded first, a token limit left unqualified is the window's.
  ["generic token limit", "Token limit exceeded"],
  ["generic token limit, in a sentence", "Request failed: token limit exceeded. Shorten the conversation and try again."],
];

const lookAlikes: readonly Case[] = [
  // Per-minute token budgets
  {
    name: "Anthropic 429 on input tokens per minute, as the SDK's RateLimitError",
    err: anthropicSdkError(
      429,
      anthropicBody(
        "rate_limit_error",
        "This request would exceed the rate limit for your organization (2f1a) of 400,000 input tokens per minute. For details, refer to: https://docs.claude.com/en/api/rate-limits.",
      ),
    ),
  },
  {
    name: "OpenAI 'Request too large' on tokens per min",
    err: openAiSdkError(
      429,
      openAiBody(
        "Request too large for gpt-4o in organization org-x4Kq on tokens per min (TPM): Limit 30000, Requested 342389. The input or output tokens must be reduced in order to run successfully.",
        "rate_limit_exceeded",
        "tokens",
      ) as never,
    ),
  },
  {
    name: "the same OpenAI TPM wording as a bare string",
    err: "Request too large for gpt-4o on tokens per min (TPM): Limit 30000, Requested 342389.",
  },
  {
    name: "Groq's TPM refusal, which comes with HTTP 413",
    err: openAiSdkError(
      413,
      openAiBody(
        "Request too large for model `llama-3.3-70b-versatile` in organization `org_01kgg5588eftc8k70aes4864eb` service tier `on_demand` on tokens per minute (TPM): Limit 12000, Requested 14137, please reduce your message size and try again. Need more tokens? Upgrade to Dev Tier today at https://console.groq.com/settings/billing",
        "rate_limit_exceeded",
        "tokens",
      ) as never,
    ),
  },
  {
    name: "Cerebras tokens per minute",
    err: { status: 429, message: "Tokens per minute limit exceeded - too many tokens processed." },
  },
  {
    name: "a 429 that uses overflow wording (z.ai sometimes answers an overflow with a rate limit)",
    err: { status: 429, message: "prompt is too long" },
  },
  {
    name: "a rate-limited proxy's token limit",
    err: "Rate limit reached: token limit exceeded for this minute",
  },
  {
    name: "a token limit that names the output, an output cap",
    err: "Output token limit exceeded: the model generates at most 8192 tokens",
  },
  // Throttling and capacity
  {
    name: "Bedrock ThrottlingException 'Too many tokens'",
    err: awsError("ThrottlingException", "Too many tokens, please wait before trying again.", 429),
  },
  {
    name: "Bedrock's throttle as a string without its exception name",
    err: "Too many tokens, please wait before trying again.",
  },
  {
    name: "a throttle formatted with a prefix",
    err: "Throttling error: Too many tokens, please wait before trying again.",
  },
  {
    name: "Bedrock service unavailable",
    err: "Service unavailable: too many tokens",
  },
  {
    // A client that reports the status by its reason phrase only (fetch's statusText) and the body after it
    name: "a 429 named by its reason phrase, beside a token complaint",
    err: "Too Many Requests: too many tokens",
  },
  {
    name: "Anthropic 529 overloaded",
    err: anthropicSdkError(529, anthropicBody("overloaded_error", "Overloaded")),
  },
  // Billing, credits, quotas
  {
    name: "Gemini quota on input tokens",
    err: {
      error: {
        code: 429,
        message:
          "You exceeded your current quota, please check your plan and billing details. Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_input_token_count, limit: 250000",
        status: "RESOURCE_EXHAUSTED",
      },
    },
  },
  {
    name: "OpenAI insufficient_quota",
    err: openAiBody("You exceeded your current quota, please check your plan and billing details.", "insufficient_quota", "insufficient_quota"),
  },
  {
    name: "Anthropic credit balance",
    err: anthropicSdkError(
      400,
      anthropicBody("invalid_request_error", "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits."),
    ),
  },
  {
    name: "OpenRouter 402 that talks about tokens",
    err: {
      error: {
        code: 402,
        message:
          "This request requires more credits, or fewer max_tokens. You requested up to 65536 tokens, but can only afford 12040. To increase, visit https://openrouter.ai/settings/credits",
      },
    },
  },
  // Output caps
  {
    name: "Anthropic max_tokens above the model's output limit",
    err: anthropicSdkError(
      400,
      anthropicBody("invalid_request_error", "max_tokens: 128000 > 64000, which is the maximum allowed number of output tokens for claude-sonnet-4-5-20250929"),
    ),
  },
  {
    name: "an Anthropic-compatible endpoint's terse output cap",
    err: '{"error":{"message":"max_tokens: 32768 > 16384"}}',
  },
  {
    name: "OpenAI max_tokens is too large",
    err: openAiSdkError(
      400,
      openAiBody("max_tokens is too large: 32000. This model supports at most 16384 completion tokens, whereas you provided 32000.", "invalid_value") as never,
    ),
  },
  {
    name: "a bare max_tokens is too large",
    err: "max_tokens is too large: 50000",
  },
  {
    name: "Groq's output cap, which mentions the context_window",
    err: "400 `max_tokens` must be less than or equal to `8192`, the maximum value for `max_tokens` is less than the `context_window` for this model",
  },
  {
    name: "DeepSeek's max_tokens range",
    err: "Invalid max_tokens value, the valid range of max_tokens is [1, 8192]",
  },
  {
    name: "Bedrock's maximum tokens you requested",
    err: '400 Bad Request {"message":"The maximum tokens you requested exceeds the model limit of 32768"}',
  },
  {
    name: "Vertex AI maxOutputTokens range",
    err: "Unable to submit request because it has a maxOutputTokens value of 100000 but the supported range is from 1 (inclusive) to 65537 (exclusive). Update the value and try again.",
  },
  // One oversized part
  {
    name: "Anthropic image over 5 MB",
    err: anthropicSdkError(
      400,
      anthropicBody("invalid_request_error", "messages.1.content.0.image.source.base64: image exceeds 5 MB maximum: 6291456 bytes > 5242880 bytes"),
    ),
  },
  {
    name: "an oversized image refused with HTTP 413",
    err: { status: 413, message: "image exceeds 5 MB maximum: 6291456 bytes > 5242880 bytes" },
  },
  {
    name: "Anthropic image dimensions",
    err: "messages.0.content.1.image.source.base64.data: At least one of the image dimensions exceed max allowed size: 8000 pixels",
  },
  {
    name: "OpenAI string_above_max_length",
    err: openAiSdkError(
      400,
      openAiBody(
        "Invalid 'messages[2].content': string too long. Expected a string with maximum length 10485760, but got a string with length 12000000 instead.",
        "string_above_max_length",
      ) as never,
    ),
  },
  {
    name: "OpenAI's per-string limit after LiteLLM has mapped it to a ContextWindowExceededError",
    err: "litellm.ContextWindowExceededError: litellm.BadRequestError: OpenAIException - Invalid 'messages[2].content': string too long. Expected a string with maximum length 10485760, but got a string with length 12000000 instead.",
  },
  {
    name: "DashScope's per-string byte limit",
    err: "400 String value length (20054016) exceeds the maximum allowed (20000000, from `StreamReadConstraints.getMaxStringLength()`)",
  },
  {
    name: "attached media over its size limit",
    err: "Compaction failed · attached media exceeds size limits",
  },
  // Byte-size limits on the request as a whole: not the window (see the module's decision)
  {
    name: "Anthropic 413 request_too_large, as the SDK's ContentTooLargeError",
    err: anthropicSdkError(413, anthropicBody("request_too_large", "Request exceeds the maximum size")),
  },
  {
    name: "Anthropic's request_too_large wording alone",
    err: "Request exceeds the maximum allowed number of bytes.",
  },
  {
    name: "a bare 413 status",
    err: { status: 413 },
  },
  {
    name: "a 413 with no body, as the Anthropic SDK reports it",
    err: anthropicSdkError(413, undefined),
  },
  {
    name: "a gateway's 413 page",
    err: "<html><head><title>413 Request Entity Too Large</title></head><body><center><h1>413 Request Entity Too Large</h1></center></body></html>",
  },
  { name: "a gateway's 413 reason phrase", err: "Payload Too Large" },
  {
    name: "a client's request size message",
    err: "Request too large (max 32MB). Double press esc to go back and try with a smaller file.",
  },
  {
    // MaKTaiL/gemini-srt-translator#63
    name: "Gemini's payload byte limit, as the Python SDK logs it",
    err: "400 INVALID_ARGUMENT. {'error': {'code': 400, 'message': 'Request payload size exceeds the limit: 314572800 bytes.', 'status': 'INVALID_ARGUMENT'}}",
  },
  {
    // google-gemini/gemini-cli#13776
    name: "Google's 413 on the request body size",
    err: genaiError(413, { error: { message: "Maximum request body size 1048576 exceeded, actual body size 1056562", code: 413, status: "Request Entity Too Large" } }),
  },
  // Look-alikes from self-hosted servers and cloud gateways
  {
    // huggingface/text-generation-inference router/src/validation.rs ValidationError::MaxNewTokens (huggingface/transformers#28523)
    name: "TGI's output cap on max_new_tokens",
    err: { status: 422, error: "Input validation error: `max_new_tokens` must be <= 192. Given: 200", error_type: "validation" },
  },
  {
    // vllm-project/vllm vllm/renderers/params.py TokenizeParams.__post_init__: the output budget alone exceeds the window
    name: "vLLM's max_tokens above max_model_len",
    err: openAiClientError(400, {
      error: {
        message: "max_tokens=300000cannot be greater than max_model_len=max_total_tokens=131072. Please request fewer output tokens. (parameter=max_tokens, value=300000)",
        type: "BadRequestError",
        param: "max_tokens",
        code: 400,
      },
    }),
  },
  {
    // vllm-project/vllm vllm/v1/engine/input_processor.py: one image larger than the encoder cache
    name: "vLLM's single multimodal item over the encoder cache",
    err: new Error(
      "The decoder prompt contains a(n) image item with 16384 embedding tokens, which exceeds the pre-allocated encoder cache size 8192. Please reduce the input size or increase the encoder cache size by setting --limit-mm-per-prompt at startup.",
    ),
  },
  {
    // xorbitsai/inference xinference/core/model.py raises it, xinference/api/restful_api.py answers 429
    name: "Xinference's request limit",
    err: { status: 429, detail: "Rate limit reached for the model. Request limit 8 for the model: qwen2.5-instruct-0" },
  },
  {
    // minorun365/agent-book#29: the daily token quota, thrown as a ThrottlingException
    name: "Bedrock's tokens-per-day quota",
    err: bedrockException(ThrottlingException, "Too many tokens per day, please wait before trying again.", 429),
  },
  {
    name: "Bedrock's throttle, as the SDK class",
    err: bedrockException(ThrottlingException, "Too many tokens, please wait before trying again.", 429),
  },
  {
    // pkdone/paul-genai-test-tools-ts: Bedrock's JSON-schema check on one request field
    name: "Bedrock's maxLength on one field of the request",
    err: bedrockException(ValidationException, "Malformed input request: expected maxLength: 50000, actual: 52611, please reformat your input and try again.", 400),
  },
  {
    // cloud.google.com/vertex-ai/generative-ai/docs/model-reference/api-errors: 429 RESOURCE_EXHAUSTED
    name: "Vertex AI's resource exhausted",
    err: genaiError(429, { error: { code: 429, message: "Resource exhausted, please try again later.", status: "RESOURCE_EXHAUSTED" } }),
  },
  {
    name: "Gemini's free-tier quota on input tokens, as @google/genai's ApiError",
    err: genaiError(429, {
      error: {
        code: 429,
        message:
          "You exceeded your current quota, please check your plan and billing details. Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_input_token_count, limit: 250000",
        status: "RESOURCE_EXHAUSTED",
      },
    }),
  },
  {
    // Vertex AI: "Unable to submit request because it has a maxOutputTokens value of 1048576 but the supported range ..."
    name: "Vertex AI maxOutputTokens out of range, through @google-cloud/vertexai",
    err: '[VertexAI.ClientError]: got status: 400 Bad Request. {"error":{"code":400,"message":"Unable to submit request because it has a maxOutputTokens value of 1048576 but the supported range is from 1 (inclusive) to 8193 (exclusive). Update the value and try again.","status":"INVALID_ARGUMENT"}}',
  },
  {
    // openai's APIError keeps only the body's `error` field: Xinference's {detail} (and vLLM's older
    // top-level body) are gone before anyone can read them, and a bare 500 is not an overflow
    name: "Xinference wrapping vLLM, through the openai JS SDK, which drops the {detail} body",
    err: openAiClientError(500, {
      detail: "[address=0.0.0.0:43769, pid=1065] The decoder prompt (length 66501) is longer than the maximum model length of 65536.",
    }),
  },
  {
    // The body was dropped before the error was built (LangChain's gaxios path); nothing says why
    name: "Vertex AI's 400 with the reason lost, as LangChain reports it",
    err: Object.assign(new Error("Google request failed with status code 400"), { response: { status: 400 } }),
  },
  {
    name: "a gaxios error whose request config discusses overflow (the conversation is not the provider's answer)",
    err: Object.assign(new Error("Request failed with status code 400"), {
      name: "GaxiosError",
      code: "400",
      config: { data: { contents: [{ parts: [{ text: "The input token count (5) exceeds the maximum number of tokens allowed (4)." }] }] } },
      response: { status: 400, data: { error: { code: 400, message: "Invalid JSON payload received.", status: "INVALID_ARGUMENT" } } },
    }),
  },
  // Other failures
  {
    name: "a 400 with no body",
    err: anthropicSdkError(400, undefined),
  },
  {
    name: "an authentication error",
    err: anthropicSdkError(401, anthropicBody("authentication_error", "invalid x-api-key")),
  },
  {
    name: "an unrelated invalid request",
    err: anthropicSdkError(400, anthropicBody("invalid_request_error", "messages.3: `tool_use` ids were found without `tool_result` blocks immediately after")),
  },
  { name: "a network failure", err: new TypeError("fetch failed") },
  // Go's deadline error, as a Go gateway in front of the provider passes it on: "context" and "exceeded", no window
  { name: "a gateway's request deadline", err: "context deadline exceeded" },
  { name: "a user abort", err: new APIUserAbortError() },
  { name: "a connection timeout", err: new APIConnectionTimeoutError() },
  {
    name: "an error whose request body discusses overflow (the conversation is not the provider's answer)",
    err: Object.assign(new Error("400 tools.2.input_schema: JSON schema is invalid"), {
      status: 400,
      request: { body: JSON.stringify({ messages: [{ role: "user", content: "why does it say prompt is too long?" }] }) },
      requestBodyValues: { messages: [{ role: "user", content: "This model's maximum context length is 8192 tokens" }] },
      headers: { "x-note": "context_length_exceeded" },
    }),
  },
];

describe("isOverflowError", () => {
  it.each(wordings)("recognises the %s wording from its words alone", (_provider, text) => {
    expect(isOverflowError(text)).toBe(true);
    expect(isOverflowError(new Error(text))).toBe(true);
  });

  it.each(overflows)("recognises $name", ({ err }) => {
    expect(isOverflowError(err)).toBe(true);
  });

  it.each(lookAlikes)("does not mistake $name for an overflow", ({ err }) => {
    expect(isOverflowError(err)).toBe(false);
  });

  it("builds the SDK error classes the tables rely on", () => {
    // If the SDK stopped mapping statuses to these classes, the tables above
    // would silently test something else.
    expect(anthropicSdkError(400, anthropicBody("invalid_request_error", PROMPT_TOO_LONG))).toBeInstanceOf(BadRequestError);
    expect(anthropicSdkError(413, undefined)).toBeInstanceOf(ContentTooLargeError);
    expect(anthropicSdkError(429, anthropicBody("rate_limit_error", "slow down"))).toBeInstanceOf(RateLimitError);
    expect(anthropicSdkError(401, anthropicBody("authentication_error", "no"))).toBeInstanceOf(AuthenticationError);
    expect(anthropicSdkError(529, anthropicBody("overloaded_error", "Overloaded"))).toBeInstanceOf(OverloadedError);
  });

  it("follows a cause chain to the provider's error", () => {
    const provider = anthropicSdkError(400, anthropicBody("invalid_request_error", PROMPT_TOO_LONG));
    const wrapped = new Error("history summarizer failed", { cause: new Error("attempt 2 of 2 failed", { cause: provider }) });
    expect(isOverflowError(wrapped)).toBe(true);
  });

  it("lets a rate limit anywhere in the cause chain win over overflow wording above it", () => {
    const limited = anthropicSdkError(429, anthropicBody("rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit"));
    expect(isOverflowError(new Error(PROMPT_TOO_LONG, { cause: limited }))).toBe(false);
  });

  it("reads the body the SDK keeps as the cause of a connection-level error", () => {
    const err = APIError.generate(undefined, anthropicBody("invalid_request_error", PROMPT_TOO_LONG), undefined, undefined);
    expect(err).toBeInstanceOf(APIConnectionError);
    expect(isOverflowError(err)).toBe(true);
  });

  it("reads the status of a body embedded as JSON in a message", () => {
    // Through OpenRouter the upstream status survives only inside the body a
    // client put in its message: a 429 there wins over the overflow wording of
    // the raw upstream answer, which a 400 in the same place does not.
    const relayed = (code: number): string =>
      `upstream error: {"error":{"message":"Provider returned error","code":${code},"metadata":{"raw":"{\\"error\\":{\\"message\\":\\"Prompt exceeds max length\\"}}","provider_name":"Z.AI"}}}`;
    expect(isOverflowError(relayed(429))).toBe(false);
    expect(isOverflowError(relayed(400))).toBe(true);
  });

  it("never takes a status alone for an overflow", () => {
    // 413 is a byte limit (see the module's decision); TGI answers every
    // validation error with 422 and Xinference every engine error with 500.
    for (const status of [400, 413, 422, 500]) {
      expect(isOverflowError({ status })).toBe(false);
      expect(isOverflowError(`${status} status code (no body)`)).toBe(false);
      expect(isOverflowError({ status, error: { message: PROMPT_TOO_LONG } })).toBe(true);
    }
  });

  it("reads an AggregateError's inner errors", () => {
    const err = new AggregateError([new Error("socket hang up"), new Error("Input is too long for requested model.")], "all attempts failed");
    expect(isOverflowError(err)).toBe(true);
  });

  it("terminates on a cause chain that loops back on itself", () => {
    const a = new Error("first") as Error & { cause?: unknown };
    const b = new Error("second", { cause: a });
    a.cause = b;
    expect(isOverflowError(a)).toBe(false);

    const looping = { message: PROMPT_TOO_LONG } as { message: string; error?: unknown };
    looping.error = looping;
    expect(isOverflowError(looping)).toBe(true);
  });

  it("stops walking a cause chain deeper than its bound instead of recursing without end", () => {
    let err: Error = new Error(PROMPT_TOO_LONG);
    for (let i = 0; i < 10_000; i += 1) err = new Error(`wrapper ${i}`, { cause: err });
    expect(isOverflowError(err)).toBe(false);

    let shallow: Error = new Error(PROMPT_TOO_LONG);
    for (let i = 0; i < 3; i += 1) shallow = new Error(`wrapper ${i}`, { cause: shallow });
    expect(isOverflowError(shallow)).toBe(true);
  });

  it("judges a huge error body without hanging", () => {
    const body = `400 ${PROMPT_TOO_LONG} ${"x".repeat(2_000_000)}`;
    expect(isOverflowError(body)).toBe(true);
    expect(isOverflowError(`400 ${"{".repeat(100_000)}`)).toBe(false);
  });

  it("never throws on objects whose fields cannot be read", () => {
    const hostile = new Proxy(
      {},
      {
        get() {
          throw new Error("no reads");
        },
      },
    );
    const getter = Object.defineProperty({}, "message", {
      get() {
        throw new Error("no message");
      },
    });
    expect(isOverflowError(hostile)).toBe(false);
    expect(isOverflowError(getter)).toBe(false);
  });

  it.each([
    ["null", null],
    ["undefined", undefined],
    ["a number", 42],
    ["a bare status number", 413],
    ["a boolean", true],
    ["an empty string", ""],
    ["an empty object", {}],
    ["an empty array", []],
    ["a symbol", Symbol("prompt is too long")],
    ["a function", () => PROMPT_TOO_LONG],
  ])("says no to %s", (_label, err) => {
    expect(isOverflowError(err)).toBe(false);
  });
});
