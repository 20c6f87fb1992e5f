/**
 * Every error the API answers with has one shape,
 * `{"error":{"code","message","field"?}}`, so a client handles all of them with
 * one branch and can point its user at the offending field. The body is
 * built by client/errorBody.ts, which the worker's metrics port shares.
 */
import type { RedisFaultKind } from "../queue/redisFaults.js";
import type { ErrorBody } from "../client/apiTypes.js";
import { errorBody } from "../client/errorBody.js";
import { ErrorCodes } from "../client/errorCodes.js";

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
    return errorBody(this.code, this.message, { field: this.field, jobId: this.jobId });
  }
}

/**
 * An ApiError as plain data, to cross from an intake thread: a structured
 * clone of an Error keeps its message and drops everything else.
 */
export interface ApiErrorData {
  readonly statusCode: number;
  readonly code: string;
  readonly message: string;
  readonly field?: string;
  readonly jobId?: string;
  readonly headers: Readonly<Record<string, string>>;
}

export function apiErrorData(error: ApiError): ApiErrorData {
  const { statusCode, code, message, field, jobId, headers } = error;
  return { statusCode, code, message, headers, ...(field !== undefined && { field }), ...(jobId !== undefined && { jobId }) };
}

export function apiErrorFrom(data: ApiErrorData): ApiError {
  return new ApiError(data.statusCode, data.code, data.message, data.field, data.jobId, data.headers);
}

/** The most of a header's value an error message repeats. */
const MAX_ECHOED = 40;

/**
 * A header's value as an error message names it: whole when short, its
 * first {@link MAX_ECHOED} characters and an ellipsis otherwise. A header
 * may be kilobytes long, and an answer that repeats it whole hands a
 * client back what it was refused for.
 */
export function echoed(value: string): string {
  return value.length <= MAX_ECHOED ? value : `${value.slice(0, MAX_ECHOED)}…`;
}

/** A 400 naming the field at fault. */
export function invalidField(field: string, message: string, code: string = ErrorCodes.invalidRequest): ApiError {
  return new ApiError(400, code, `${field}: ${message}`, field);
}

/**
 * 410: `what` was issued by this service and is no longer stored. Redis has
 * forgotten whether it completed, so the agent's only safe move is to submit
 * the work again (docs/OPERATIONS.md, "When Redis loses its data").
 */
export function gone(what: string): ApiError {
  return new ApiError(
    410,
    ErrorCodes.gone,
    `${what} was accepted but is no longer stored: its result expired (COMPACTD_RESULT_TTL_SECONDS) or Redis lost its data; submit it again`,
  );
}

/** Seconds a client should wait before retrying a request refused for load or an outage. */
export const RETRY_AFTER_SECONDS = 5;

/** What each retryable Redis fault looks like to a client. */
const REDIS_FAULT_MESSAGES: Readonly<Record<RedisFaultKind, string>> = {
  connection: "the queue's Redis cannot be reached",
  timeout: "the queue's Redis did not answer in time",
  cluster: "the queue's Redis cluster is re-forming or moving keys",
  loading: "the queue's Redis is loading its data after a restart",
  readonly: "the queue's Redis does not accept writes (a failover is under way)",
  busy: "the queue's Redis is busy running a script",
  out_of_memory: "the queue's Redis is out of memory",
};

/**
 * 503: Redis cannot serve the request now (see redisFaults.ts). The request
 * may or may not have taken effect (a timed-out add can still land); a retry
 * with the same Idempotency-Key is safe either way.
 */
export function redisUnavailable(fault: RedisFaultKind = "connection"): ApiError {
  return new ApiError(503, ErrorCodes.unavailable, `${REDIS_FAULT_MESSAGES[fault]}; retry shortly`, undefined, undefined, {
    "retry-after": String(RETRY_AFTER_SECONDS),
  });
}
