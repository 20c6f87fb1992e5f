import { z } from "zod";
import { SECRET_PREFIX, webhookKey } from "./client/webhookSignature.js";
import { LOG_LEVELS, type LogLevel } from "./telemetry/logger.js";
import { RESULT_ENCODINGS } from "./queue/resultStore.js";
import { allowEntryProblem } from "./webhooks/callbackAllow.js";
import { MODEL_ID, MODEL_ID_FORM } from "./summarizers/modelId.js";
import { isUrlWithScheme, URL_WITHOUT_SPACES } from "./http/urlWithScheme.js";
import { DEFAULT_API_PORT, DEFAULT_METRICS_PORT } from "./servicePorts.js";
import { parseUrl } from "./http/parseUrl.js";

/**
 * The service's environment table: every variable the API and worker read,
 * validated once at start-up so a wrong value stops the process with a message
 * naming it instead of surfacing as a confusing failure hours later.
 *
 * Blank values count as unset: orchestrators commonly render `FOO=` for a
 * variable nobody filled in, and that should mean "use the default".
 */

/** One bad variable: enough to fix it without reading this file. */
export interface ConfigProblem {
  readonly variable: string;
  /** The value as given, or a placeholder for secrets so they never reach logs. */
  readonly shown: string;
  readonly expected: string;
}

/** Every wrong variable at once, so an operator fixes the environment in one pass. */
export class ConfigError extends Error {
  readonly code = "invalid_config";
  constructor(readonly problems: readonly ConfigProblem[]) {
    super(
      `invalid configuration:\n${problems.map((p) => `  ${p.variable}=${p.shown}: ${p.expected}`).join("\n")}`,
    );
    this.name = "ConfigError";
  }
}

export interface ApiKey {
  readonly tenant: string;
  readonly key: string;
}

/**
 * What a variable's value may be, as far as that one value tells: the rules
 * below carry it, so the error message, the README's table and the Helm
 * chart's values.schema.json each read a bound from where it is enforced and
 * a changed bound cannot leave a stale copy.
 */
export type ValueForm =
  | {
      readonly kind: "integer";
      readonly min: number;
      /** Number.MAX_SAFE_INTEGER when only the minimum matters. */
      readonly max: number;
      /** The maximum in words ("an hour"), for readers who do not count zeros. */
      readonly maxInWords?: string;
    }
  /** Above 0, decimals allowed. */
  | { readonly kind: "decimal"; readonly max: number; readonly maxInWords?: string }
  /** One of `values`, in any case. */
  | { readonly kind: "choice"; readonly values: readonly string[] }
  /** `true` or `false`, in any case. */
  | { readonly kind: "flag" }
  /** Anything else (URLs, lists, names): its own code checks it. */
  | { readonly kind: "text" };

/** What the README's environment table is generated from (test/readme.test.ts). */
export interface ConfigVariableDoc {
  readonly env: string;
  readonly field: keyof Config;
  /** Markdown: the default in code font, or what leaving the variable unset means. */
  readonly default: string;
  /** Markdown, ending with the range a number is refused outside of. */
  readonly description: string;
  readonly form: ValueForm;
}

function fail(ctx: z.RefinementCtx, message: string): typeof z.NEVER {
  ctx.addIssue({ code: "custom", message });
  return z.NEVER;
}

/** How one variable's text is read, and what it may be. */
interface Rule<T> {
  readonly read: z.ZodType<T, string>;
  readonly form: ValueForm;
}

/** A rule no schema of the value alone could state, such as a URL the URL parser must take. */
function textRule<T>(read: z.ZodType<T, string>): Rule<T> {
  return { read, form: { kind: "text" } };
}

/** A maximum with what it amounts to, e.g. 3600000 ms is "an hour". */
interface Limit {
  readonly value: number;
  readonly inWords: string;
}

function limitOf(max: number | Limit): { max: number; maxInWords?: string } {
  return typeof max === "number" ? { max } : { max: max.value, maxInWords: max.inWords };
}

function integer(min: number, most: number | Limit = Number.MAX_SAFE_INTEGER): Rule<number> {
  const form = { kind: "integer", min, ...limitOf(most) } as const;
  const expected =
    form.max === Number.MAX_SAFE_INTEGER ? `expected an integer ≥ ${min}` : `expected an integer from ${min} to ${form.max}`;
  const read = z.string().transform((raw, ctx) => {
    const value = /^\s*\d+\s*$/.test(raw) ? Number(raw) : Number.NaN;
    return Number.isSafeInteger(value) && value >= min && value <= form.max ? value : fail(ctx, expected);
  });
  return { read, form };
}

function positiveNumber(most: number | Limit): Rule<number> {
  const form = { kind: "decimal", ...limitOf(most) } as const;
  const read = z.string().transform((raw, ctx) => {
    const value = /^\s*\d+(\.\d+)?\s*$/.test(raw) ? Number(raw) : Number.NaN;
    return Number.isFinite(value) && value > 0 && value <= form.max ? value : fail(ctx, `expected a positive number of at most ${form.max}`);
  });
  return { read, form };
}

/**
 * A bound in the README's words: "at most 3600000 (an hour)", or "from 100 to
 * 600000 (ten minutes)" when the least value is not the obvious one.
 */
function rangeInWords(form: ValueForm): string | undefined {
  if ((form.kind !== "integer" && form.kind !== "decimal") || form.max === Number.MAX_SAFE_INTEGER) return undefined;
  const max = form.maxInWords === undefined ? `${form.max}` : `${form.max} (${form.maxInWords})`;
  return form.kind === "integer" && form.min !== 1 ? `from ${form.min} to ${max}` : `at most ${max}`;
}

function url(schemes: readonly string[]): Rule<string> {
  const expected = `expected a URL starting with ${schemes.map((s) => `${s}//`).join(" or ")}, ${URL_WITHOUT_SPACES}`;
  return textRule(
    z.string().transform((raw, ctx) => {
      const value = raw.trim();
      return isUrlWithScheme(value, schemes) ? value : fail(ctx, expected);
    }),
  );
}

/**
 * Seed nodes of a Redis Cluster: a few suffice, the client discovers the rest.
 * Credentials and TLS come from the first entry, so every entry must agree on
 * the scheme; a database number has no meaning on a cluster.
 */
const clusterNodes: Rule<string[]> = textRule(z.string().transform((raw, ctx) => {
  const entries = list(raw);
  const problems = entries.flatMap((entry, index) => {
    const where = `entry ${index + 1}`;
    const node = parseUrl(entry);
    if (node === undefined) return [`${where} is not a URL`];
    if (node.protocol !== "redis:" && node.protocol !== "rediss:") return [`${where} does not start with redis:// or rediss://`];
    if (node.pathname !== "" && node.pathname !== "/") return [`${where} names a database, which a cluster does not have`];
    if (node.protocol !== new URL(entries[0]!).protocol) return [`${where} mixes redis:// and rediss://`];
    return [];
  });
  if (entries.length === 0) problems.push("no entry");
  return problems.length === 0
    ? entries
    : fail(ctx, `expected comma-separated redis:// or rediss:// URLs of cluster nodes; ${problems.join("; ")}`);
}));

const trimmed: z.ZodType<string, string> = z.string().transform((raw) => raw.trim());

const text: Rule<string> = textRule(trimmed);

/** A model id a request's `model` could also be (modelId.ts), so a typo stops the start, not every job. */
const modelId: Rule<string> = textRule(
  trimmed.transform((value, ctx) => (MODEL_ID.test(value) ? value : fail(ctx, `expected ${MODEL_ID_FORM}`))),
);

function list(raw: string): string[] {
  return raw
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry !== "");
}

/** Tenants end up in Redis keys and job ids, where `:` and spaces would be separators. */
const TENANT = /^[A-Za-z0-9._-]{1,64}$/;

/** Problems name entries by position and tenant only: the keys are secrets. */
const apiKeys: Rule<ApiKey[]> = textRule(z.string().transform((raw, ctx) => {
  const pairs: ApiKey[] = [];
  const problems: string[] = [];
  const tenantOfKey = new Map<string, string>();
  list(raw).forEach((entry, index) => {
    const colon = entry.indexOf(":");
    const tenant = colon < 0 ? "" : entry.slice(0, colon).trim();
    const key = colon < 0 ? "" : entry.slice(colon + 1).trim();
    const where = `entry ${index + 1}`;
    if (colon < 0) problems.push(`${where} has no ":" between tenant and key`);
    else if (!TENANT.test(tenant)) problems.push(`${where} has tenant "${tenant}" (1-64 of A-Z a-z 0-9 . _ -)`);
    else if (key === "" || /\s/.test(key)) problems.push(`${where} (tenant "${tenant}") has an empty key or one with spaces`);
    else if (tenantOfKey.has(key)) problems.push(`tenants "${tenantOfKey.get(key)}" and "${tenant}" share a key`);
    else {
      tenantOfKey.set(key, tenant);
      pairs.push({ tenant, key });
    }
  });
  if (problems.length > 0) return fail(ctx, `expected comma-separated tenant:key pairs with unique keys; ${problems.join("; ")}`);
  return pairs;
}));

/**
 * Standard Webhooks secrets are `whsec_` + base64 of the HMAC key. Node
 * decodes base64 leniently (bad characters vanish), so a mistyped secret
 * would sign with a different key than the receiver holds: it is decoded
 * strictly (webhookKey), as the service signs with it. 24 bytes is the
 * Standard Webhooks minimum.
 */
const webhookSecret: Rule<string> = textRule(z.string().transform((raw, ctx) => {
  const value = raw.trim();
  const key = value.startsWith(SECRET_PREFIX) ? webhookKey(value) : undefined;
  return key !== undefined && key.length >= 24 ? value : fail(ctx, 'expected "whsec_" followed by the base64 of at least 24 random bytes');
}));

/**
 * BullMQ puts the prefix in front of every key; on Redis Cluster all keys of a
 * queue must share a slot, which a `{hash tag}` in the prefix guarantees. A
 * brace that does not form a tag would silently spread a queue over slots.
 * A control character is refused as in every other name: a NUL cannot reach
 * a container's environment at all, and the others make keys that
 * `redis-cli` and dashboards show garbled.
 */
const queuePrefix: Rule<string> = textRule(z.string().transform((raw, ctx) => {
  const value = raw.trim();
  const open = value.indexOf("{");
  const tagged = open < 0 ? !value.includes("}") : /^\{[^{}]+\}/.test(value.slice(open));
  return !/[\s\p{Cc}]/u.test(value) && tagged
    ? value
    : fail(ctx, "expected a prefix without spaces or control characters whose braces, if any, form a non-empty {hash tag}");
}));

const callbackAllow: Rule<string[]> = textRule(z.string().transform((raw, ctx) => {
  const entries = list(raw);
  const problems = entries.map(allowEntryProblem).filter((problem): problem is string => problem !== null);
  return problems.length === 0
    ? entries
    : fail(ctx, `expected comma-separated host names, IP addresses or CIDRs; ${problems.join("; ")}`);
}));

interface Variable<T> {
  readonly env: string;
  /** Markdown, see {@link ConfigVariableDoc}. */
  readonly default: string;
  readonly description: string;
  readonly form: ValueForm;
  readonly secret: boolean;
  readonly schema: z.ZodType<T, string | undefined>;
}

/**
 * The README's description: `sentence` (markdown, without its full stop)
 * followed by the rule's range, so the range is written where it is enforced.
 */
function described(sentence: string, form: ValueForm): string {
  const range = rangeInWords(form);
  return range === undefined ? `${sentence}.` : `${sentence}; ${range}.`;
}

/**
 * A variable with a default, given in the environment's own string form so it
 * is validated like input. `defaultInWords` glosses it in the README ("20 MiB");
 * `documentedDefault` replaces it there when the default is more than a value.
 */
function withDefault<T>(
  env: string,
  fallback: string,
  rule: Rule<T>,
  sentence: string,
  {
    defaultInWords,
    documentedDefault = defaultInWords === undefined ? `\`${fallback}\`` : `\`${fallback}\` (${defaultInWords})`,
    secret = false,
  }: { defaultInWords?: string; documentedDefault?: string; secret?: boolean } = {},
): Variable<T> {
  return {
    env,
    default: documentedDefault,
    description: described(sentence, rule.form),
    form: rule.form,
    secret,
    schema: z.string().default(fallback).pipe(rule.read),
  };
}

/** A variable whose absence means something (documented in `whenUnset`) rather than a default value. */
function optional<T>(
  env: string,
  rule: Rule<T>,
  sentence: string,
  whenUnset: string,
  secret = false,
): Variable<T | undefined> {
  return { env, default: whenUnset, description: described(sentence, rule.form), form: rule.form, secret, schema: rule.read.optional() };
}

/** Reads one of `values`, in any case and with spaces around. */
function readOneOf<T extends string>(values: readonly T[]): z.ZodType<T, string> {
  return z.string().transform((raw, ctx) => {
    const value = raw.trim().toLowerCase();
    return (values as readonly string[]).includes(value) ? (value as T) : fail(ctx, `expected one of ${values.join(", ")}`);
  });
}

function oneOf<T extends string>(values: readonly T[]): Rule<T> {
  return { read: readOneOf(values), form: { kind: "choice", values } };
}

const flag: Rule<boolean> = { read: readOneOf(["true", "false"]).transform((value) => value === "true"), form: { kind: "flag" } };

/**
 * OTLP over HTTP with protobuf bodies is the one protocol the bundled
 * exporter speaks; a `grpc` or `http/json` setting would otherwise be
 * silently ignored and the collector would wonder where the traces went.
 */
const otlpProtocol = oneOf(["http/protobuf"]);

const logLevel: Rule<LogLevel> = oneOf(LOG_LEVELS);

const MIB = 1024 * 1024;

/**
 * Upper bounds of the delays the service waits on (timers, lock renewals,
 * backoffs): far beyond any sane setting, so a larger value is a typo (an
 * extra zero, seconds taken for minutes), refused at start-up. Past 2^31 ms a
 * Node timer fires at once instead (see core/timerDelay.ts).
 */
const TEN_MINUTES_MS: Limit = { value: 600_000, inWords: "ten minutes" };
const HOUR_MS: Limit = { value: 3_600_000, inWords: "an hour" };
const DAY_MS: Limit = { value: 86_400_000, inWords: "a day" };

/**
 * Upper bounds of how long things are kept or retried. A month: a receiver or
 * a client away over a long holiday is still served, while an extra digit
 * (240000 hours for 24) would otherwise keep retrying a dead callback, or keep
 * results in Redis, for decades.
 */
const MONTH_HOURS: Limit = { value: 720, inWords: "30 days" };
const MONTH_SECONDS: Limit = { value: MONTH_HOURS.value * 3600, inWords: MONTH_HOURS.inWords };

/**
 * Upper bounds of counts and sizes: each far beyond what one process or one
 * request sensibly takes, so a larger value is a typo that would otherwise
 * open the process to more concurrent calls, held requests or memory than any
 * machine has, surfacing as an outage instead of a start-up message.
 */
const MOST_CONCURRENCY = 1000;
const MOST_STALLED_COUNT = 100;
/** A body is read into one string, and V8 strings end at about 512 MiB. */
const MOST_BODY_BYTES: Limit = { value: 512 * MIB, inWords: "512 MiB" };
const MOST_INTAKE_BYTES: Limit = { value: 16 * 1024 * MIB, inWords: "16 GiB" };
const MOST_INTAKES = 10_000;
const MOST_WAITERS = 100_000;
const MOST_BACKLOG = 10_000_000;
const MOST_BATCH_ITEMS = 10_000;

/**
 * Longest wait before a compaction's retry: as long as a callback's longest
 * (COMPACTD_CALLBACK_MAX_BACKOFF_MS), and well below the 2^31 ms a Node timer keeps.
 */
const LONGEST_JOB_RETRY_MS = DAY_MS.value;

/**
 * The most compaction attempts whose last retry delay stays within
 * {@link LONGEST_JOB_RETRY_MS}. BullMQ's exponential backoff waits
 * `backoffMs × 2^(n−1)` after failed attempt n, so the wait before the last
 * of `attempts` is `backoffMs × 2^(attempts−2)`: unbounded, a few dozen
 * attempts leave an agent's job queued for days and overflow the timer.
 */
function mostJobAttempts(backoffMs: number): number {
  let attempts = 2;
  while (backoffMs * 2 ** (attempts - 1) <= LONGEST_JOB_RETRY_MS) attempts++;
  return attempts;
}

const JOB_BACKOFF_DEFAULT_MS = 2000;

/**
 * Attempts no backoff allows: the shortest one (1 ms) allows the most. The
 * attempts a given backoff allows are checked across the two variables.
 */
const MOST_JOB_ATTEMPTS: Limit = { value: mostJobAttempts(1), inWords: "at a backoff of 1 ms" };

const VARIABLES = {
  redisUrl: withDefault(
    "REDIS_URL",
    "redis://127.0.0.1:6379",
    url(["redis:", "rediss:"]),
    "Standalone Redis holding the queues, results and locks; ignored when `REDIS_CLUSTER_NODES` is set. Must run with `maxmemory-policy noeviction`",
    { documentedDefault: "`redis://127.0.0.1:6379`; unset, `dev` uses a private Redis when nothing answers there" },
  ),
  redisClusterNodes: optional(
    "REDIS_CLUSTER_NODES",
    clusterNodes,
    "Comma-separated `redis://` or `rediss://` URLs of a few Redis Cluster nodes (credentials and TLS from the first); sets cluster mode",
    "unset: standalone Redis at `REDIS_URL`",
  ),
  anthropicApiKey: optional(
    "ANTHROPIC_API_KEY",
    text,
    "Key for the Anthropic summarizer",
    "unset: the worker uses the offline summarizer (structured extract, no model) and warns",
    true,
  ),
  anthropicBaseUrl: optional(
    "ANTHROPIC_BASE_URL",
    url(["http:", "https:"]),
    "Anthropic-compatible endpoint (z.ai, Moonshot, DeepSeek, a proxy)",
    "unset: the SDK's default",
  ),
  model: optional(
    "COMPACTD_MODEL",
    modelId,
    `Model that writes the summaries, ${MODEL_ID_FORM} (the form only; the model's API says whether it exists). Any other value stops the service at start-up naming the variable`,
    "unset: the summarizer's default model",
  ),
  apiKeys: withDefault(
    "COMPACTD_API_KEYS",
    "",
    apiKeys,
    "Comma-separated `tenant:key` pairs; a request's Bearer key picks its tenant",
    { documentedDefault: "unset: `serve` refuses to start; `dev` uses tenant `local` with key `dev`", secret: true },
  ),
  webhookSecret: optional(
    "COMPACTD_WEBHOOK_SECRET",
    webhookSecret,
    "Standard Webhooks signing secret (`whsec_…`) for callbacks",
    "unset: requests with a callbackUrl are refused with 400",
    true,
  ),
  queuePrefix: withDefault(
    "COMPACTD_QUEUE_PREFIX",
    "{compactd}",
    queuePrefix,
    "Prefix of every Redis key; the `{hash tag}` keeps a queue in one Redis Cluster slot",
  ),
  queueShards: withDefault(
    "COMPACTD_QUEUE_SHARDS",
    "1",
    integer(1, 64),
    "Compaction queues, each under its own hash tag so a Redis Cluster spreads them over masters; a conversation's jobs share one. Raise it, never lower it while the dropped shards hold jobs",
  ),
  port: withDefault("PORT", String(DEFAULT_API_PORT), integer(1, 65535), "HTTP port of the API"),
  metricsPort: withDefault("METRICS_PORT", String(DEFAULT_METRICS_PORT), integer(1, 65535), "Port of the worker's `/metrics` and `/healthz`"),
  logLevel: withDefault(
    "COMPACTD_LOG_LEVEL",
    "info",
    logLevel,
    "Least severe JSON log line written: `info` logs each job's end and every failure; `debug` adds job starts",
  ),
  workerConcurrency: withDefault(
    "WORKER_CONCURRENCY",
    "50",
    integer(1, MOST_CONCURRENCY),
    "Compactions one worker runs at once; they wait on the LLM, not the CPU",
  ),
  jobAttempts: withDefault(
    "COMPACTD_JOB_ATTEMPTS",
    "3",
    integer(1, MOST_JOB_ATTEMPTS),
    `Attempts per compaction before it fails; as many as keep the last retry delay (\`COMPACTD_JOB_BACKOFF_MS\` doubled per attempt) within a day: ${mostJobAttempts(JOB_BACKOFF_DEFAULT_MS)} at the default backoff`,
  ),
  jobBackoffMs: withDefault(
    "COMPACTD_JOB_BACKOFF_MS",
    String(JOB_BACKOFF_DEFAULT_MS),
    integer(1, HOUR_MS),
    "First retry delay of a compaction, doubled per attempt",
  ),
  lockDurationMs: withDefault(
    "COMPACTD_LOCK_DURATION_MS",
    "10000",
    integer(1, HOUR_MS),
    "Job lock of a worker; a crashed worker's jobs are taken over after it lapses",
  ),
  stalledIntervalMs: withDefault("COMPACTD_STALLED_INTERVAL_MS", "5000", integer(1, HOUR_MS), "How often workers look for lapsed locks"),
  maxStalledCount: withDefault(
    "COMPACTD_MAX_STALLED_COUNT",
    "3",
    integer(1, MOST_STALLED_COUNT),
    "Times a job may be taken over after a crash before it fails",
  ),
  resultTtlSeconds: withDefault(
    "COMPACTD_RESULT_TTL_SECONDS",
    "86400",
    integer(1, MONTH_SECONDS),
    "How long finished jobs and their results are kept",
  ),
  resultEncoding: withDefault(
    "COMPACTD_RESULT_ENCODING",
    "base64",
    oneOf(RESULT_ENCODINGS),
    "How results are stored in Redis: `base64` text, which every version reads, or `raw` bytes, a quarter smaller, which this version and later read; set `raw` once every API and worker runs this version (docs/DEPLOY.md)",
  ),
  bodyLimitBytes: withDefault(
    "COMPACTD_BODY_LIMIT_BYTES",
    String(20 * MIB),
    integer(1, MOST_BODY_BYTES),
    "Largest request body (a compressed one as it decompresses); larger ones get 413",
    { defaultInWords: "20 MiB" },
  ),
  maxBacklog: withDefault(
    "COMPACTD_MAX_BACKLOG",
    "10000",
    integer(1, MOST_BACKLOG),
    "Queued jobs beyond which submissions get 429",
  ),
  maxBatchItems: withDefault(
    "COMPACTD_MAX_BATCH_ITEMS",
    "100",
    integer(1, MOST_BATCH_ITEMS),
    "Most items in one batch request",
  ),
  callbackAllow: withDefault(
    "COMPACTD_CALLBACK_ALLOW",
    "",
    callbackAllow,
    "Comma-separated host names in ASCII (`*.domain` for subdomains, `xn--` form for international names), IPs or CIDRs callbacks may reach besides public addresses",
    { documentedDefault: "empty" },
  ),
  callbackMaxAgeHours: withDefault(
    "COMPACTD_CALLBACK_MAX_AGE_HOURS",
    "24",
    positiveNumber(MONTH_HOURS),
    "How long a callback is retried before it is given up (decimals allowed)",
  ),
  callbackBackoffMs: withDefault(
    "COMPACTD_CALLBACK_BACKOFF_MS",
    "5000",
    integer(1, DAY_MS),
    "First retry delay of a callback, doubled per attempt",
  ),
  callbackMaxBackoffMs: withDefault(
    "COMPACTD_CALLBACK_MAX_BACKOFF_MS",
    "3600000",
    integer(1, DAY_MS),
    "Longest delay between two callback attempts, at least `COMPACTD_CALLBACK_BACKOFF_MS`",
  ),
  callbackTimeoutMs: withDefault(
    "COMPACTD_CALLBACK_TIMEOUT_MS",
    "10000",
    integer(1, TEN_MINUTES_MS),
    "Time a receiver has to answer one queued callback (a first delivery, made as the job settles, waits at most a second of it)",
  ),
  callbackConcurrency: withDefault(
    "COMPACTD_CALLBACK_CONCURRENCY",
    "50",
    integer(1, MOST_CONCURRENCY),
    "Queued callbacks one worker delivers at once",
  ),
  redisCommandTimeoutMs: withDefault(
    "COMPACTD_REDIS_COMMAND_TIMEOUT_MS",
    "2000",
    integer(1, TEN_MINUTES_MS),
    "Longest the API waits for Redis to answer one command before the request gets 503 with Retry-After",
  ),
  maxIntakes: withDefault(
    "COMPACTD_MAX_INTAKES",
    "64",
    integer(1, MOST_INTAKES),
    "Requests one API process reads and checks at once; more get 503 with Retry-After before their body is read",
  ),
  maxIntakeBytes: withDefault(
    "COMPACTD_MAX_INTAKE_BYTES",
    String(128 * MIB),
    integer(1, MOST_INTAKE_BYTES),
    "Body bytes one API process takes in at once (a body without Content-Length counts as the body limit, a compressed one as it decompresses); more get 503",
    { defaultInWords: "128 MiB" },
  ),
  intakeThreads: withDefault(
    "COMPACTD_INTAKE_THREADS",
    "2",
    integer(1, 64),
    "Worker threads one API process parses and plans large request bodies on, so its event loop stays free",
  ),
  intakeThreadMinBytes: withDefault(
    "COMPACTD_INTAKE_THREAD_MIN_BYTES",
    String(128 * 1024),
    integer(0),
    "Bodies at least this large are taken in on an intake thread; smaller ones on the event loop (a few milliseconds each)",
    { defaultInWords: "128 KiB" },
  ),
  intakeDeadlineMs: withDefault(
    "COMPACTD_INTAKE_DEADLINE_MS",
    "10000",
    integer(100, TEN_MINUTES_MS),
    "Longest an intake thread may work on one request (parsing, cut plan, digests, compression); beyond it the request gets 503 and nothing is queued",
  ),
  maxWaiters: withDefault(
    "COMPACTD_MAX_WAITERS",
    "1000",
    integer(1, MOST_WAITERS),
    "Requests one API process holds with ?wait at once; beyond it a request is answered at once with the job as it is",
  ),
  callbackHostConcurrency: withDefault(
    "COMPACTD_CALLBACK_HOST_CONCURRENCY",
    "25",
    integer(1, MOST_CONCURRENCY),
    "Of a worker's callback slots, how many one receiver (host and port) may hold, first deliveries and queued ones together; its other callbacks wait in the queue",
  ),
  shutdownTimeoutMs: withDefault(
    "COMPACTD_SHUTDOWN_TIMEOUT_MS",
    "25000",
    integer(1, HOUR_MS),
    'Deadline for finishing or handing back active jobs on SIGTERM; every close step (HTTP server, workers, queues, Redis connections) is bounded by it, and what misses it is dropped and named on stderr (OPERATIONS.md, "Shutdown when Redis is gone")',
  ),
  otlpEndpoint: optional(
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    url(["http:", "https:"]),
    "OTLP/HTTP collector base URL; traces go to `/v1/traces` under it. Setting it turns tracing on ([docs/OPERATIONS.md](docs/OPERATIONS.md#tracing)). The exporter also honours `OTEL_EXPORTER_OTLP_HEADERS`, `_TIMEOUT` and `_COMPRESSION`; `OTEL_TRACES_SAMPLER(_ARG)` and `OTEL_RESOURCE_ATTRIBUTES` apply",
    "unset: no traces (see `OTEL_TRACES_EXPORTER`)",
  ),
  otlpTracesEndpoint: optional(
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    url(["http:", "https:"]),
    "Full URL spans are posted to; setting it turns tracing on",
    "unset: derived from `OTEL_EXPORTER_OTLP_ENDPOINT`",
  ),
  otelTracesExporter: optional(
    "OTEL_TRACES_EXPORTER",
    oneOf(["otlp", "none"]),
    "`otlp` turns tracing on (to the endpoint above, or `http://localhost:4318`); `none` turns it off",
    "unset: tracing is on exactly when an OTLP endpoint is set",
  ),
  otelSdkDisabled: withDefault(
    "OTEL_SDK_DISABLED",
    "false",
    flag,
    "`true` turns tracing off whatever the other `OTEL_*` variables say",
  ),
  otlpProtocol: optional(
    "OTEL_EXPORTER_OTLP_PROTOCOL",
    otlpProtocol,
    "OTLP transport; only `http/protobuf` is supported (`grpc` and `http/json` are refused at start-up)",
    "`http/protobuf`",
  ),
  otlpTracesProtocol: optional(
    "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
    otlpProtocol,
    "The same, for traces only",
    "`http/protobuf`",
  ),
  otelServiceName: optional(
    "OTEL_SERVICE_NAME",
    text,
    "The `service.name` of exported spans",
    "`compactd-api` (serve), `compactd-worker` (worker), `compactd` (dev)",
  ),
} satisfies Record<string, Variable<unknown>>;

export type Config = { -readonly [K in keyof typeof VARIABLES]: z.output<(typeof VARIABLES)[K]["schema"]> };

export const CONFIG_VARIABLES: readonly ConfigVariableDoc[] = Object.entries(VARIABLES).map(([field, variable]) => ({
  env: variable.env,
  field: field as keyof Config,
  default: variable.default,
  description: variable.description,
  form: variable.form,
}));

function shown(variable: Variable<unknown>, raw: string): string {
  if (variable.secret) return `<hidden, ${raw.length} characters>`;
  return JSON.stringify(withoutCredentials(raw));
}

/** Redis URLs (and lists of them) fit for logs: they may carry a password. */
export function withoutCredentials(url: string): string {
  return url.replace(/\/\/[^/@,]*@/g, "//<credentials>@");
}

/** Reads and validates the whole table; throws {@link ConfigError} naming every wrong variable. */
export function loadConfig(env: NodeJS.ProcessEnv): Config {
  const problems: ConfigProblem[] = [];
  const values: Record<string, unknown> = {};
  for (const [field, variable] of Object.entries(VARIABLES) as [string, Variable<unknown>][]) {
    const given = env[variable.env];
    const raw = given === undefined || given.trim() === "" ? undefined : given;
    const parsed = variable.schema.safeParse(raw);
    if (parsed.success) values[field] = parsed.data;
    else
      problems.push({
        variable: variable.env,
        shown: shown(variable, raw ?? ""),
        expected: parsed.error.issues.map((issue) => issue.message).join("; "),
      });
  }
  if (problems.length > 0) throw new ConfigError(problems);
  const config = values as Config;
  const combined: ConfigProblem[] = [];
  if (config.callbackMaxBackoffMs < config.callbackBackoffMs) {
    combined.push({
      variable: "COMPACTD_CALLBACK_MAX_BACKOFF_MS",
      shown: JSON.stringify(String(config.callbackMaxBackoffMs)),
      expected: `expected at least COMPACTD_CALLBACK_BACKOFF_MS (${config.callbackBackoffMs})`,
    });
  }
  const mostAttempts = mostJobAttempts(config.jobBackoffMs);
  if (config.jobAttempts > mostAttempts) {
    combined.push({
      variable: "COMPACTD_JOB_ATTEMPTS",
      shown: JSON.stringify(String(config.jobAttempts)),
      expected: `expected at most ${mostAttempts} with COMPACTD_JOB_BACKOFF_MS=${config.jobBackoffMs}, so the last retry waits at most a day (the backoff doubles per attempt)`,
    });
  }
  if (combined.length > 0) throw new ConfigError(combined);
  return config;
}
