/**
 * Recognising a summarizer request the provider refused as wrong, rather than
 * one it could not serve just now.
 *
 * A bad model name, a revoked key, a request the API finds invalid: asking
 * again sends the same request and gets the same answer, so retrying it
 * spends the retry budget and keeps an agent waiting for nothing. It is told
 * apart from an outage by what the provider said: an HTTP 4xx other than the
 * three that mean "not now" (408 timeout, 409 conflict, 429 rate limit), or,
 * where the refusal came as an error event in a stream that had answered
 * 200, the error's type. (A context overflow is a 400 too; the compactor
 * recognises that first, see overflow.ts.)
 */

/** The 4xx statuses that say "try again later", as the Anthropic SDK retries them. */
const PASSING_4XX = new Set([408, 409, 429]);

/** Anthropic's error types that refuse the request itself (its 4xx other than those above). */
const REJECTING_TYPES = new Set([
  "invalid_request_error",
  "authentication_error",
  "billing_error",
  "permission_error",
  "not_found_error",
  "request_too_large",
]);

/** What an SDK error says about the provider's answer: its status, error type and own words, where it has them. */
export interface ProviderAnswer {
  readonly status: number | undefined;
  readonly type: string | undefined;
  /** The provider's message, not the SDK's rendering of the whole body. */
  readonly message: string | undefined;
}

/**
 * The provider's answer as `@anthropic-ai/sdk` errors carry it (`status`,
 * `type`, `apiMessage`), or as the body on `error` (`{error: {type, message}}`)
 * for SDKs that keep only that.
 */
export function providerAnswerOf(err: unknown): ProviderAnswer {
  if (typeof err !== "object" || err === null) return { status: undefined, type: undefined, message: undefined };
  const fields = err as { status?: unknown; type?: unknown; apiMessage?: unknown; error?: { error?: { type?: unknown; message?: unknown } } };
  const body = typeof fields.error === "object" && fields.error !== null ? fields.error.error : undefined;
  return {
    status: typeof fields.status === "number" && Number.isInteger(fields.status) ? fields.status : undefined,
    type: textOf(fields.type) ?? textOf(body?.type),
    message: textOf(fields.apiMessage) ?? textOf(body?.message),
  };
}

/** Whether the provider refused the request as it is (see the file's comment). */
export function isRejectedRequest(err: unknown): boolean {
  const { status, type } = providerAnswerOf(err);
  if (status !== undefined) return status >= 400 && status < 500 && !PASSING_4XX.has(status);
  return type !== undefined && REJECTING_TYPES.has(type);
}

function textOf(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}
