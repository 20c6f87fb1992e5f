/**
 * The `error.code` values the service answers with: in an HTTP error body, in
 * a failed or cancelled job's `error`, and in a `compaction.failed` webhook.
 * Named once, here, so the service raises a code and an agent compares
 * against it by the same name, and a renamed code is a compile error on both
 * sides rather than a silent mismatch. (The core's own errors carry their
 * codes on their classes: `nothing_to_compact`, `compaction_disabled`,
 * `invalid_conversation`.)
 */
export const ErrorCodes = {
  /** A request field is wrong; `field` names it. */
  invalidRequest: "invalid_request",
  /** The conversation is not one the service can compact; `field` points into it. */
  invalidConversation: "invalid_conversation",
  /** A callbackUrl was given but the service has no webhook secret. */
  callbacksDisabled: "callbacks_disabled",
  /** A callbackUrl the service will not call (not https, not allowed, private address). */
  invalidCallbackUrl: "invalid_callback_url",
  unauthorized: "unauthorized",
  notFound: "not_found",
  /**
   * A job or batch id the service issued but no longer holds: its result
   * expired (COMPACTD_RESULT_TTL_SECONDS) or Redis lost its data. Submit again.
   */
  gone: "gone",
  /** The metrics and probe server answers GET (and HEAD) only. */
  methodNotAllowed: "method_not_allowed",
  bodyTooLarge: "body_too_large",
  /** The body's Content-Encoding is not one the API takes (`Accept-Encoding` lists those it does), its charset is not UTF-8, or the body is not JSON. */
  unsupportedMediaType: "unsupported_media_type",
  /** The body is not what its Content-Encoding says (not gzip data, for `gzip`). */
  invalidContentEncoding: "invalid_content_encoding",
  invalidContentLength: "invalid_content_length",
  /** The body is not JSON, or its bytes are not UTF-8 (the message says at which byte). */
  invalidJson: "invalid_json",
  /** The URL does not read: a %-escape in its path does not decode, or an absolute-form target's host or port is malformed (the message says which). */
  invalidUrl: "invalid_url",
  /** The URL is longer than the API takes (no URL of its own comes near it). */
  uriTooLong: "uri_too_long",
  /** The request line and headers are larger than the HTTP server takes. */
  headersTooLarge: "headers_too_large",
  /** The request line and headers did not arrive in the time the HTTP server gives them (60 s). */
  requestTimeout: "request_timeout",
  /** Any other request HTTP refuses (a 4xx the routes did not raise themselves). */
  badRequest: "bad_request",
  /** An Idempotency-Key reused for a different request. */
  idempotencyKeyReused: "idempotency_key_reused",
  /** The conversation already has a compaction queued or running; `jobId` names it. */
  compactionInFlight: "compaction_in_flight",
  /** DELETE of a job that already completed or failed. */
  jobFinished: "job_finished",
  /** The queue's backlog is at its limit: retry after `Retry-After`. */
  backlogFull: "backlog_full",
  /** This API process is at its intake limit: retry after `Retry-After`. */
  busy: "busy",
  /** Redis cannot serve the request now: retry after `Retry-After`. */
  unavailable: "unavailable",
  /** Taking the request in took longer than COMPACTD_INTAKE_DEADLINE_MS; nothing was queued. Retry after `Retry-After`. */
  intakeDeadline: "intake_deadline",
  /** The API process began shutting down while it took the request in; nothing was queued. Retry after `Retry-After`. */
  shuttingDown: "shutting_down",
  internalError: "internal_error",
  /** The job was cancelled (DELETE), before it started or while it ran. */
  cancelled: "cancelled",
  /** Workers kept dying on the job: it stalled more often than the service allows. */
  stalled: "stalled",
  /** The job's stored conversation could not be decoded. */
  invalidPayload: "invalid_payload",
  /**
   * The job's stored conversation is gone from Redis (it outlived its key's
   * 30-day expiry in the queue, or Redis lost data): submit the request again.
   */
  payloadMissing: "payload_missing",
} as const;

export type ErrorCode = (typeof ErrorCodes)[keyof typeof ErrorCodes];
