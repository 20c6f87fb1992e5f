/**
 * Which Redis errors say "not now" rather than "never".
 *
 * A request that fails on one of these can succeed unchanged a few seconds
 * later: the connection comes back, a failover finishes, a replica is promoted,
 * a dataset finishes loading, a script ends, a cluster re-forms or a slot
 * migration completes. The API answers them 503 with `Retry-After` (never a
 * 500, which agents and compactd's own client treat as final) and reports not
 * ready while they last. Every other Redis error is a bug in compactd (a wrong
 * command or key type) and stays a 500.
 *
 * The one list lives here so the API's error handler, its readiness probe, the
 * worker's probe and the metrics all classify alike; Redis Cluster support
 * relies on it for the redirection and cluster-state errors.
 */

/**
 * Why Redis could not serve a command:
 * - `connection`: no connection, or it dropped mid-command;
 * - `timeout`: connected, but no answer within the command timeout (Redis
 *   stalled: a long `DEBUG SLEEP`, `CLIENT PAUSE`, a fork on a huge dataset);
 * - `cluster`: the cluster is down or re-forming, or keys are moving between
 *   slots (`CLUSTERDOWN`, `MOVED`/`ASK` storms, `TRYAGAIN`, slot-cache refresh failures);
 * - `loading`: Redis is loading its dataset after a restart;
 * - `readonly`: the node is (or just became) a replica, or cannot reach enough replicas to accept writes;
 * - `busy`: a script or function is running past the busy threshold;
 * - `out_of_memory`: `maxmemory` is reached and writes are refused until keys expire or the limit is raised.
 */
export type RedisFaultKind = "connection" | "timeout" | "cluster" | "loading" | "readonly" | "busy" | "out_of_memory";

/** Redis reply errors start with an upper-case code; these are the retryable ones. */
const REPLY_CODES: Readonly<Record<string, RedisFaultKind>> = {
  CLUSTERDOWN: "cluster",
  MOVED: "cluster",
  ASK: "cluster",
  TRYAGAIN: "cluster",
  LOADING: "loading",
  READONLY: "readonly",
  NOREPLICAS: "readonly",
  MASTERDOWN: "readonly",
  BUSY: "busy",
  OOM: "out_of_memory",
};

/** ioredis's own errors (no reply code), by the message it raises them with. */
const CLIENT_MESSAGES: readonly { readonly pattern: RegExp; readonly kind: RedisFaultKind }[] = [
  { pattern: /^Command timed out|^timeout$|^Socket timeout/, kind: "timeout" },
  {
    pattern:
      /^Too many Cluster redirections|^Failed to refresh slots cache|^None of startup nodes is available|^Cluster isn't ready|^Cluster is disconnect|^Node is disconnected/,
    kind: "cluster",
  },
  {
    pattern:
      /Connection is closed|Stream isn't writeable|ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|EHOSTUNREACH|ENOTFOUND|EAI_AGAIN|Reached the max retries per request|^Ready check failed/,
    kind: "connection",
  },
];

/** The retryable Redis fault `error` is, or undefined when it is not one. */
export function redisFaultOf(error: unknown): RedisFaultKind | undefined {
  if (!(error instanceof Error)) return undefined;
  if (error.name === "MaxRetriesPerRequestError") return "connection";
  if (error.name === "ClusterAllFailedError") return "cluster";
  // Errors raised by a command inside a script (BullMQ's are all scripts) keep
  // the command's code in Redis 7, so the first word is the code either way.
  const code = /^[A-Z]+/.exec(error.message)?.[0];
  const byCode = code === undefined ? undefined : REPLY_CODES[code];
  if (byCode !== undefined) return byCode;
  return CLIENT_MESSAGES.find(({ pattern }) => pattern.test(error.message))?.kind;
}
