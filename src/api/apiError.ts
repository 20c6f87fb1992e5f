/**
 * Every error the API answers with has one shape,
 * `{"error":{"code","message","field"?}}`, so a client handles all of them with
 * one branch and can point its user at the offending field.
 */

export interface ErrorBody {
  readonly error: {
    readonly code: string;
    readonly message: string;
    readonly field?: string;
    /** The job an error is about (the compaction in flight on a 409). */
    readonly jobId?: string;
  };
}

export class ApiError extends Error {
  constructor(
    readonly statusCode: number,
    readonly code: string,
    message: string,
    readonly field?: string,
    readonly jobId?: string,
    /** Extra response headers (`Retry-After`, `WWW-Authenticate`). */
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
    this.name = "ApiError";
  }

  body(): ErrorBody {
    return {
      error: {
        code: this.code,
        message: this.message,
        ...(this.field !== undefined && { field: this.field }),
        ...(this.jobId !== undefined && { jobId: this.jobId }),
      },
    };
  }
}

/** A 400 naming the field at fault. */
export function invalidField(field: string, message: string, code = "invalid_request"): ApiError {
  return new ApiError(400, code, `${field}: ${message}`, field);
}

/** Seconds a client should wait before retrying a request refused for load or an outage. */
export const RETRY_AFTER_SECONDS = 5;

/** 503: the queue's Redis does not answer. Nothing was queued; the client retries. */
export function redisUnavailable(): ApiError {
  return new ApiError(503, "unavailable", "the queue's Redis cannot be reached; retry shortly", undefined, undefined, {
    "retry-after": String(RETRY_AFTER_SECONDS),
  });
}
