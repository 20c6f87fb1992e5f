/**
 * Requests Node's HTTP parser refuses before fastify sees them: a request
 * line and headers larger than it takes (`--max-http-header-size`, 16 KiB
 * by default, which bounds a URL too), bytes that are not HTTP/1.1, a
 * request whose line and headers have not all arrived within the server's
 * `headersTimeout` (Node's 60 s; fastify turns Node's whole-request timeout
 * off, so a body arriving slowly is not refused here).
 * Node hands each to the server's `clientError` handler with the socket
 * alone. fastify's own handler answered them in a shape of its own, which
 * a client that reads `error.code` could not read, and no metric counted
 * them; here they are answered in the API's error shape, whenever the
 * socket can still take an answer, and counted. The answer says what was
 * too large, never repeats it.
 */
import { maxHeaderSize, STATUS_CODES } from "node:http";
import type { Duplex } from "node:stream";
import { ErrorCodes } from "../client/errorCodes.js";
import type { Metrics } from "../metrics/metrics.js";
import { ApiError } from "./apiError.js";
import { countUnparsedRequest } from "./httpMetrics.js";

/** A fastify `clientErrorHandler` that answers and counts as described above. */
export function answerUnparsedRequests(metrics: Metrics): (error: NodeJS.ErrnoException, socket: Duplex) => void {
  return (error, socket) => {
    // A reset connection, or one already gone, has no one to answer.
    if (error.code === "ECONNRESET" || socket.destroyed) return;
    const refusal = refusalOf(error);
    countUnparsedRequest(metrics, refusal.statusCode);
    if (socket.writable) {
      const body = JSON.stringify(refusal.body());
      socket.write(
        `HTTP/1.1 ${refusal.statusCode} ${STATUS_CODES[refusal.statusCode]}\r\n` +
          `content-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
      );
    }
    // What follows on the connection cannot be read as requests any more.
    socket.destroy();
  };
}

function refusalOf(error: NodeJS.ErrnoException): ApiError {
  if (error.code === "HPE_HEADER_OVERFLOW") {
    return new ApiError(431, ErrorCodes.headersTooLarge, `the request line and headers are larger than the ${maxHeaderSize} bytes taken`);
  }
  if (error.code === "ERR_HTTP_REQUEST_TIMEOUT") {
    return new ApiError(408, ErrorCodes.requestTimeout, "the request line and headers did not arrive in time");
  }
  return new ApiError(400, ErrorCodes.badRequest, `the request is not valid HTTP/1.1 (${error.code ?? "unreadable"})`);
}
