import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics, type RegistryContentType } from "prom-client";
import { REASONS } from "../core/compactor.js";
import { DEGRADATION_CAUSES } from "../core/degradation.js";

/**
 * Every Prometheus metric compactd exports, created on a registry the caller
 * owns. A factory instead of module-level metrics because prom-client refuses
 * a second metric with the same name on one registry: tests create many
 * services in one process, and `compactd dev` runs the API and the worker
 * together (they share one `Metrics`).
 *
 * Label values are closed sets (listed per metric); nothing from a request
 * (tenant, conversation id, error text) becomes a label, so series stay
 * bounded however many tenants there are.
 */

/**
 * Compaction and summarizer latencies: the default buckets stop at 10 s, but a
 * summarization of a large transcript takes tens of seconds and a retried one
 * minutes; the tail is what matters for agents waiting on an overflow.
 */
export const LLM_SECONDS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 180, 300, 600];

/** Time in the queue: near zero when idle, minutes under a backlog. */
const QUEUE_WAIT_SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];

/** One HTTP POST to a receiver, bounded by the callback timeout. */
const CALLBACK_SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** One API request: milliseconds for most, up to a minute for `?wait=` polls. */
const HTTP_SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** Context sizes from a small agent's to the largest windows (2M tokens). */
const TOKEN_BUCKETS = [500, 1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 100_000, 200_000, 500_000, 1_000_000, 2_000_000];

export const JOB_OUTCOMES = ["completed", "degraded", "failed", "cancelled", "nothing_to_compact"] as const;
export type JobOutcome = (typeof JOB_OUTCOMES)[number];
/**
 * The reason `compactd_jobs_total` counts a failed job under when Redis lost
 * the job's own record: what asked for it was in that record. Counting it
 * anyway, under a value of its own, keeps the failure in the failure ratio
 * the alerts read, without a guess at which reason it was. Only `failed`
 * has it: such a job cannot run.
 */
export const UNKNOWN_REASON = "unknown";
/**
 * How a summarizer call ended: `ok`, or the cause the compactor classified
 * its failure as. Made from the causes themselves, so a new cause is counted
 * as itself rather than folded into another.
 */
export const SUMMARIZER_OUTCOMES = ["ok", ...DEGRADATION_CAUSES] as const;
export type SummarizerOutcome = (typeof SUMMARIZER_OUTCOMES)[number];
export const TOKEN_DIRECTIONS = ["input", "output"] as const;
export type TokenDirection = (typeof TOKEN_DIRECTIONS)[number];
/**
 * One callback delivery attempt: `delivered` (2xx), `gone` (410, retries
 * stop), `rejected` (another status), `redirected` (3xx, not followed),
 * `timeout`, `unreachable` (connection or DNS failure), `refused` (the address
 * policy blocked the connection). `abandoned` counts callbacks given up after
 * their last attempt, in addition to that attempt's own outcome.
 */
/**
 * Provider statuses a summarizer error or rejection is pre-exported with
 * (rate limited, server errors, Anthropic's overloaded 529); `none` is an
 * error without an HTTP status (connection refused, a stream cut off or
 * answering with an error event). Other statuses (a 401 of a revoked key, a
 * 404 of a bad model name) appear with their first error.
 */
export const SUMMARIZER_ERROR_STATUSES = ["429", "500", "502", "503", "504", "529", "none"] as const;
export const CALLBACK_OUTCOMES = ["delivered", "gone", "rejected", "redirected", "timeout", "unreachable", "refused", "abandoned"] as const;
export type CallbackOutcome = (typeof CALLBACK_OUTCOMES)[number];

/**
 * prom-client's default metrics include `nodejs_active_{handles,requests,resources}_total`:
 * gauges whose names end in `_total`, which `promtool check metrics` (and any
 * CI that lints scrapes) rejects as counter names on a gauge. The same counts
 * are the sums of the per-type gauges `nodejs_active_handles` etc., so these
 * three are dropped rather than renamed.
 */
const MISNAMED_DEFAULT_GAUGES = ["nodejs_active_handles_total", "nodejs_active_requests_total", "nodejs_active_resources_total"];

export interface Metrics {
  readonly registry: Registry;
  /** outcome: {@link JobOutcome}; reason: threshold | overflow | manual, or {@link UNKNOWN_REASON} (failed only). */
  readonly jobsTotal: Counter<"reason" | "outcome">;
  readonly tokensBefore: Histogram;
  readonly tokensAfter: Histogram;
  /** reason: the compaction's reason (threshold | overflow | manual), not the failure text. */
  readonly degradedTotal: Counter<"reason">;
  /**
   * Compactions whose result is still above the threshold (the result's
   * `stillAboveThreshold`), and nothing-to-compact answers whose context is
   * above it (theirs); reason as for degradedTotal. Their agents cannot
   * compact their way below it, whichever answer they got.
   */
  readonly stillAboveThresholdTotal: Counter<"reason">;
  /**
   * The latency histograms below (`*_seconds`) carry the trace of an
   * observation as an exemplar: observe them with `observeLatency`
   * (exemplars.ts), which prom-client's exemplar mode requires.
   */
  /** From a worker taking the job to its end; reason as above. */
  readonly jobDuration: Histogram<"reason">;
  /**
   * From submission to the job's outcome (completed, degraded or failed),
   * retries and queueing included: how long an agent waiting on it waits.
   */
  readonly jobLatency: Histogram<"reason">;
  /** From submission to a worker taking the job; reason shows whether overflow jobs really jump the queue. */
  readonly queueWait: Histogram<"reason">;
  /** outcome: {@link SummarizerOutcome}. */
  readonly summarizerRequestsTotal: Counter<"outcome">;
  /** direction: {@link TokenDirection}, as reported by the provider. */
  readonly summarizerTokensTotal: Counter<"direction">;
  /** status_code: the provider's HTTP status, or `none` (see {@link SUMMARIZER_ERROR_STATUSES}). */
  readonly summarizerErrorsTotal: Counter<"status_code">;
  readonly summarizerDuration: Histogram;
  /** outcome: {@link CallbackOutcome}. */
  readonly callbacksTotal: Counter<"outcome">;
  /** One delivery attempt. */
  readonly callbackDuration: Histogram;
  /** Set by the one process holding the queue-jobs lease (see queueJobsCollector.ts). */
  readonly queueJobs: Gauge<"queue" | "state">;
  readonly stalledJobsTotal: Counter;
  readonly omittedMessagesTotal: Counter;
  readonly splitTurnsTotal: Counter;
  /** API requests; route is the route's pattern (`/v1/compactions/:id`), never the raw URL. */
  readonly httpRequestsTotal: Counter<"method" | "route" | "status_code">;
  readonly httpRequestDuration: Histogram<"method" | "route">;
}

/**
 * Creates every metric on `registry` (a new one by default), plus Node's
 * default process metrics (`process_*`, `nodejs_*`, unprefixed as dashboards
 * expect them). Call once per registry.
 */
export function createMetrics(registry: Registry = new Registry()): Metrics {
  collectDefaultMetrics({ register: registry });
  for (const name of MISNAMED_DEFAULT_GAUGES) registry.removeSingleMetric(name);
  // prom-client admits histograms with exemplars only onto an OpenMetrics
  // registry; it is one while they are created and renders the text format
  // by default afterwards (exposition.ts chooses per scrape).
  const anyFormat = registry as Registry<RegistryContentType>;
  anyFormat.setContentType(Registry.OPENMETRICS_CONTENT_TYPE);
  const registers = [anyFormat];
  const metrics: Metrics = {
    registry,
    jobsTotal: new Counter({
      name: "compactd_jobs_total",
      help: "Compaction requests by reason and how they ended.",
      labelNames: ["reason", "outcome"],
      registers,
    }),
    tokensBefore: new Histogram({
      name: "compactd_tokens_before",
      help: "Estimated context tokens of a conversation before compaction.",
      buckets: TOKEN_BUCKETS,
      registers,
    }),
    tokensAfter: new Histogram({
      name: "compactd_tokens_after",
      help: "Estimated context tokens of a conversation after compaction.",
      buckets: TOKEN_BUCKETS,
      registers,
    }),
    degradedTotal: new Counter({
      name: "compactd_degraded_total",
      help: "Compactions that fell back to the offline summary because the LLM summarizer failed, by compaction reason.",
      labelNames: ["reason"],
      registers,
    }),
    stillAboveThresholdTotal: new Counter({
      name: "compactd_still_above_threshold_total",
      help: "Compactions whose context came out still above the threshold (window minus reserve), and nothing_to_compact answers whose context was above it, so compacting again cannot help, by compaction reason.",
      labelNames: ["reason"],
      registers,
    }),
    jobDuration: new Histogram({
      name: "compactd_job_duration_seconds",
      help: "Time a worker spent on a compaction job.",
      labelNames: ["reason"],
      buckets: LLM_SECONDS,
      enableExemplars: true,
      registers,
    }),
    jobLatency: new Histogram({
      name: "compactd_job_latency_seconds",
      help: "Time from submission to a compaction's outcome (completed, degraded or failed), retries included.",
      labelNames: ["reason"],
      buckets: LLM_SECONDS,
      enableExemplars: true,
      registers,
    }),
    queueWait: new Histogram({
      name: "compactd_queue_wait_seconds",
      help: "Time from submission until a worker took the job.",
      labelNames: ["reason"],
      buckets: QUEUE_WAIT_SECONDS,
      enableExemplars: true,
      registers,
    }),
    summarizerRequestsTotal: new Counter({
      name: "compactd_summarizer_requests_total",
      help: "Summarization calls by outcome, as the compactor classified each (an empty answer counts as ok).",
      labelNames: ["outcome"],
      registers,
    }),
    summarizerTokensTotal: new Counter({
      name: "compactd_summarizer_tokens_total",
      help: "Tokens the summarizer provider reported, by direction.",
      labelNames: ["direction"],
      registers,
    }),
    summarizerErrorsTotal: new Counter({
      name: "compactd_summarizer_errors_total",
      help: "Summarization calls that failed with an error, by the provider's HTTP status (none: no status).",
      labelNames: ["status_code"],
      registers,
    }),
    summarizerDuration: new Histogram({
      name: "compactd_summarizer_duration_seconds",
      help: "Duration of one summarization call.",
      buckets: LLM_SECONDS,
      enableExemplars: true,
      registers,
    }),
    callbacksTotal: new Counter({
      name: "compactd_callbacks_total",
      help: "Callback delivery attempts by outcome; abandoned counts callbacks given up.",
      labelNames: ["outcome"],
      registers,
    }),
    callbackDuration: new Histogram({
      name: "compactd_callback_duration_seconds",
      help: "Duration of one callback delivery attempt.",
      buckets: CALLBACK_SECONDS,
      enableExemplars: true,
      registers,
    }),
    queueJobs: new Gauge({
      name: "compactd_queue_jobs",
      help: "Jobs per queue and state, exported by one process of the deployment only.",
      labelNames: ["queue", "state"],
      registers,
    }),
    stalledJobsTotal: new Counter({
      name: "compactd_stalled_jobs_total",
      help: "Jobs whose worker stopped renewing its lock and that were handed to another worker.",
      registers,
    }),
    omittedMessagesTotal: new Counter({
      name: "compactd_omitted_messages_total",
      help: "Messages left out of a summarization request because the transcript did not fit it.",
      registers,
    }),
    splitTurnsTotal: new Counter({
      name: "compactd_split_turns_total",
      help: "Compactions that cut inside a turn and summarized the turn's head separately.",
      registers,
    }),
    httpRequestsTotal: new Counter({
      name: "compactd_http_requests_total",
      help: "API requests by method, route pattern and response status.",
      labelNames: ["method", "route", "status_code"],
      registers,
    }),
    httpRequestDuration: new Histogram({
      name: "compactd_http_request_duration_seconds",
      help: "Time the API took to answer a request, by method and route pattern.",
      labelNames: ["method", "route"],
      buckets: HTTP_SECONDS,
      enableExemplars: true,
      registers,
    }),
  };
  anyFormat.setContentType(Registry.PROMETHEUS_CONTENT_TYPE);
  exportEveryLabelSetAtZero(metrics);
  return metrics;
}

/**
 * A labelled series that does not exist yet has no first value: `rate()` and
 * `increase()` need two samples, so a counter born at 1 loses that 1, and an
 * alert on the first failures of a fresh pod never fires. So every label set
 * of the closed sets above is exported at 0 from start-up.
 */
function exportEveryLabelSetAtZero(metrics: Metrics): void {
  for (const reason of REASONS) {
    for (const outcome of JOB_OUTCOMES) metrics.jobsTotal.inc({ reason, outcome }, 0);
    metrics.degradedTotal.inc({ reason }, 0);
    metrics.stillAboveThresholdTotal.inc({ reason }, 0);
    metrics.jobDuration.zero({ reason });
    metrics.jobLatency.zero({ reason });
    metrics.queueWait.zero({ reason });
  }
  metrics.jobsTotal.inc({ reason: UNKNOWN_REASON, outcome: "failed" }, 0);
  for (const outcome of SUMMARIZER_OUTCOMES) metrics.summarizerRequestsTotal.inc({ outcome }, 0);
  for (const status_code of SUMMARIZER_ERROR_STATUSES) metrics.summarizerErrorsTotal.inc({ status_code }, 0);
  for (const direction of TOKEN_DIRECTIONS) metrics.summarizerTokensTotal.inc({ direction }, 0);
  for (const outcome of CALLBACK_OUTCOMES) metrics.callbacksTotal.inc({ outcome }, 0);
}
