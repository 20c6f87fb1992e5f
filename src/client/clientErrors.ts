/**
 * How a call to the service fails: the service refused it
 * ({@link CompactdApiError}), or it could not be reached at all
 * ({@link CompactdConnectionError}), in both cases after the retries.
 *
 * The API puts every error in one body, `{"error":{"code","message","field"?,
 * "jobId"?}}`, so an agent branches on `code` (stable) rather than on the
 * message (prose), and can point at `field` when its request was at fault.
 */
import type { ErrorBody } from "./apiTypes.js";

export class CompactdApiError extends Error {
  override readonly name = "CompactdApiError";

  constructor(
    /** The HTTP status. */
    readonly status: number,
    /** Stable machine-readable code: `invalid_request`, `compaction_in_flight`, `backlog_full`, … */
    readonly code: string,
    message: string,
    /** The request field at fault (`messages[3].content[0].tool_use_id`), when there is one. */
    readonly field?: string,
    /** The job the error is about: on `compaction_in_flight`, the compaction already running. */
    readonly jobId?: string,
  ) {
    super(message);
  }

  /**
   * The error a response stands for. A body that is not the API's (a proxy's
   * HTML 502, an empty 503) still gives an error with the status, so a caller
   * never has to handle a parse failure on top of the failure itself.
   */
  static fromResponse(status: number, bodyText: string): CompactdApiError {
    const error = errorOf(bodyText);
    if (error === undefined) {
      const excerpt = bodyText.trim().slice(0, 200);
      return new CompactdApiError(status, `http_${status}`, `HTTP ${status}${excerpt === "" ? "" : `: ${excerpt}`}`);
    }
    return new CompactdApiError(status, error.code, error.message, error.field, error.jobId);
  }
}

function errorOf(bodyText: string): ErrorBody["error"] | undefined {
  let body: unknown;
  try {
    body = JSON.parse(bodyText);
  } catch {
    return undefined;
  }
  const error = (body as Partial<ErrorBody> | null)?.error;
  if (error === null || typeof error !== "object") return undefined;
  if (typeof error.code !== "string" || typeof error.message !== "string") return undefined;
  return {
    code: error.code,
    message: error.message,
    ...(typeof error.field === "string" && { field: error.field }),
    ...(typeof error.jobId === "string" && { jobId: error.jobId }),
  };
}

/** The service could not be reached (refused, reset, timed out), on every attempt. */
export class CompactdConnectionError extends Error {
  override readonly name = "CompactdConnectionError";

  constructor(method: string, url: string, attempts: number, cause: unknown) {
    const reason = cause instanceof Error ? (cause.cause instanceof Error ? cause.cause.message : cause.message) : String(cause);
    super(`${method} ${url} failed after ${attempts} attempt${attempts === 1 ? "" : "s"}: ${reason}`, { cause });
  }
}
