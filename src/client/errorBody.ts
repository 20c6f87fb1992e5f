/**
 * The body of every error the service answers over HTTP,
 * `{"error":{"code","message","field"?,"jobId"?}}`, built in one place for
 * both of its HTTP servers: the API and the worker's metrics port.
 *
 * It sits beside errorCodes.ts for the same reason: the service writes
 * the shape an agent reads, and typing it by the API's generated
 * {@link ErrorBody} makes a drift between the two a compile error. It is no
 * part of `compactd/client` (index.ts does not export it) and loads nothing.
 */
import type { ErrorBody } from "./apiTypes.js";

/** What an error may say beyond its code and message. */
export interface ErrorDetails {
  /** The request field at fault. */
  readonly field?: string;
  /** The job the error is about (the compaction in flight on a 409). */
  readonly jobId?: string;
}

/** An error's body; a detail left undefined is left out, not written as null. */
export function errorBody(code: string, message: string, { field, jobId }: ErrorDetails = {}): ErrorBody {
  return { error: { code, message, ...(field !== undefined && { field }), ...(jobId !== undefined && { jobId }) } };
}
