/**
 * Connections to callback receivers, kept open between callbacks.
 *
 * A busy deployment sends most callbacks to a few receivers, one per job.
 * A connection per callback cost both ends a TCP handshake and teardown
 * each time (on loopback, more CPU than signing the body), and the receiver
 * an accept. Kept open, a connection serves the next callback to the same
 * host and port; idle for `IDLE_MS`, or past the receiver's own Keep-Alive
 * hint, it is closed, so a receiver that has gone for a day holds nothing.
 * The guarded lookup still runs for every new connection; a connection
 * being reused was checked when it was made.
 */
import { Agent as HttpAgent } from "node:http";
import { Agent as HttpsAgent } from "node:https";

/**
 * Below the idle timeouts of common receivers (Node's 5 s, load balancers'
 * 60 s), so that compactd, not the receiver, closes an idle connection.
 */
const IDLE_MS = 2_000;

export interface CallbackAgents {
  readonly http: HttpAgent;
  readonly https: HttpsAgent;
  /** Closes every connection, idle or not (the worker is shutting down). */
  destroy(): void;
}

export function createCallbackAgents(): CallbackAgents {
  // Concurrency per receiver is the receiver slots' business, not the agents'.
  const options = { keepAlive: true, timeout: IDLE_MS };
  const http = new HttpAgent(options);
  const https = new HttpsAgent(options);
  return {
    http,
    https,
    destroy() {
      http.destroy();
      https.destroy();
    },
  };
}
