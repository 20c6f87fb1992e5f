import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { CONFIG_VARIABLES, ConfigError, loadConfig } from "../src/config.js";

function problemsOf(env: NodeJS.ProcessEnv): ConfigError {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error("expected loadConfig to throw a ConfigError");
}

/** Expects `variable=value` to be the one problem start-up finds, its message saying `expected`. */
function expectRefusedAlone(variable: string, value: string, expected: string): void {
  const error = problemsOf({ [variable]: value });
  expect(error.problems.map((p) => p.variable)).toEqual([variable]);
  expect(error.message).toContain(`${variable}="${value}": ${expected}`);
}

const secret = `whsec_${randomBytes(32).toString("base64")}`;

describe("loadConfig", () => {
  it("fills every default of the contract table from an empty environment", () => {
    const config = loadConfig({});
    expect(config).toEqual({
      redisUrl: "redis://127.0.0.1:6379",
      redisClusterNodes: undefined,
      anthropicApiKey: undefined,
      anthropicBaseUrl: undefined,
      model: undefined,
      apiKeys: [],
      webhookSecret: undefined,
      queuePrefix: "{compactd}",
      queueShards: 1,
      port: 8080,
      metricsPort: 9464,
      logLevel: "info",
      otelSdkDisabled: false,
      otelTracesExporter: undefined,
      otlpEndpoint: undefined,
      otlpTracesEndpoint: undefined,
      otlpProtocol: undefined,
      otlpTracesProtocol: undefined,
      otelServiceName: undefined,
      workerConcurrency: 50,
      jobAttempts: 3,
      jobBackoffMs: 2000,
      lockDurationMs: 10000,
      stalledIntervalMs: 5000,
      maxStalledCount: 3,
      resultTtlSeconds: 86400,
      resultEncoding: "base64",
      bodyLimitBytes: 20 * 1024 * 1024,
      maxIntakes: 64,
      maxIntakeBytes: 128 * 1024 * 1024,
      intakeThreads: 2,
      intakeThreadMinBytes: 128 * 1024,
      intakeDeadlineMs: 10000,
      maxWaiters: 1000,
      maxBacklog: 10000,
      maxBatchItems: 100,
      callbackAllow: [],
      callbackMaxAgeHours: 24,
      callbackBackoffMs: 5000,
      callbackMaxBackoffMs: 3600000,
      callbackTimeoutMs: 10000,
      callbackConcurrency: 50,
      callbackHostConcurrency: 25,
      redisCommandTimeoutMs: 2000,
      shutdownTimeoutMs: 25000,
    });
  });

  it("reads every variable in its documented form", () => {
    const config = loadConfig({
      REDIS_URL: "rediss://user:pw@redis.internal:6380/2",
      ANTHROPIC_API_KEY: "sk-ant-test",
      ANTHROPIC_BASE_URL: "http://127.0.0.1:4010",
      COMPACTD_MODEL: "claude-test",
      COMPACTD_API_KEYS: "acme:key-1, globex : key:with:colons",
      COMPACTD_WEBHOOK_SECRET: secret,
      COMPACTD_QUEUE_PREFIX: "{t1}",
      PORT: "3000",
      METRICS_PORT: "65535",
      WORKER_CONCURRENCY: "200",
      COMPACTD_CALLBACK_ALLOW: "127.0.0.1, 10.0.0.0/8, ::1, fd00::/8, hooks.internal, *.svc.cluster.local",
      COMPACTD_CALLBACK_MAX_AGE_HOURS: "0.5",
    });
    expect(config.redisUrl).toBe("rediss://user:pw@redis.internal:6380/2");
    expect(config.anthropicApiKey).toBe("sk-ant-test");
    expect(config.anthropicBaseUrl).toBe("http://127.0.0.1:4010");
    expect(config.model).toBe("claude-test");
    expect(config.apiKeys).toEqual([
      { tenant: "acme", key: "key-1" },
      { tenant: "globex", key: "key:with:colons" },
    ]);
    expect(config.webhookSecret).toBe(secret);
    expect(config.queuePrefix).toBe("{t1}");
    expect([config.port, config.metricsPort, config.workerConcurrency]).toEqual([3000, 65535, 200]);
    expect(config.callbackAllow).toEqual(["127.0.0.1", "10.0.0.0/8", "::1", "fd00::/8", "hooks.internal", "*.svc.cluster.local"]);
    expect(config.callbackMaxAgeHours).toBe(0.5);
  });

  it("treats blank values as unset so an orchestrator's empty FOO= means the default", () => {
    const config = loadConfig({ PORT: "", COMPACTD_WEBHOOK_SECRET: "  ", COMPACTD_API_KEYS: "" });
    expect(config.port).toBe(8080);
    expect(config.webhookSecret).toBeUndefined();
    expect(config.apiKeys).toEqual([]);
  });

  it("takes both result encodings and names the two when given another", () => {
    expect(loadConfig({ COMPACTD_RESULT_ENCODING: " RAW " }).resultEncoding).toBe("raw");
    expect(problemsOf({ COMPACTD_RESULT_ENCODING: "gzip" }).message).toContain('COMPACTD_RESULT_ENCODING="gzip": expected one of base64, raw');
  });

  it("takes a model id in the form a request's model takes, and refuses one no model could have, naming it", () => {
    expect(loadConfig({ COMPACTD_MODEL: " claude-sonnet-5-5 " }).model).toBe("claude-sonnet-5-5");
    expect(loadConfig({ COMPACTD_MODEL: "anthropic/claude-3.5:beta" }).model).toBe("anthropic/claude-3.5:beta");
    expect(loadConfig({ COMPACTD_MODEL: "   " }).model).toBeUndefined();
    for (const model of ["claude sonnet", "claude-\u0007", "x".repeat(201)]) {
      expect(problemsOf({ COMPACTD_MODEL: model }).message).toContain(
        `COMPACTD_MODEL=${JSON.stringify(model)}: expected a model id: 1-200 characters without spaces or control characters`,
      );
    }
  });

  it("lists every wrong variable in one error, each with its value and what is expected", () => {
    const error = problemsOf({
      PORT: "0",
      METRICS_PORT: "70000",
      WORKER_CONCURRENCY: "-3",
      COMPACTD_JOB_ATTEMPTS: "2.5",
      REDIS_URL: "http://127.0.0.1:6379",
      ANTHROPIC_BASE_URL: "not a url",
      COMPACTD_CALLBACK_MAX_AGE_HOURS: "0",
      COMPACTD_QUEUE_PREFIX: "{}x",
      COMPACTD_CALLBACK_ALLOW: "10.0.0.0/33, bad_host!, 127.0.0.1",
    });
    expect(error.problems.map((p) => p.variable)).toEqual([
      "REDIS_URL",
      "ANTHROPIC_BASE_URL",
      "COMPACTD_QUEUE_PREFIX",
      "PORT",
      "METRICS_PORT",
      "WORKER_CONCURRENCY",
      "COMPACTD_JOB_ATTEMPTS",
      "COMPACTD_CALLBACK_ALLOW",
      "COMPACTD_CALLBACK_MAX_AGE_HOURS",
    ]);
    expect(error.message).toContain('PORT="0": expected an integer from 1 to 65535');
    expect(error.message).toContain('METRICS_PORT="70000": expected an integer from 1 to 65535');
    expect(error.message).toContain('WORKER_CONCURRENCY="-3": expected an integer from 1 to 1000');
    expect(error.message).toContain('COMPACTD_JOB_ATTEMPTS="2.5": expected an integer from 1 to 28');
    expect(error.message).toContain("REDIS_URL=\"http://127.0.0.1:6379\": expected a URL starting with redis:// or rediss://");
    expect(error.message).toContain('ANTHROPIC_BASE_URL="not a url": expected a URL starting with http:// or https://');
    expect(error.message).toContain('COMPACTD_CALLBACK_MAX_AGE_HOURS="0": expected a positive number of at most 720');
    expect(error.message).toContain("{hash tag}");
    expect(error.message).toContain('"10.0.0.0/33" is not a CIDR');
    expect(error.message).toContain('"bad_host!" is neither an IP address, a CIDR nor a host name');
  });

  it("refuses an intake deadline or thread count outside its range, naming it", () => {
    const error = problemsOf({ COMPACTD_INTAKE_DEADLINE_MS: "50", COMPACTD_INTAKE_THREADS: "0", COMPACTD_INTAKE_THREAD_MIN_BYTES: "-1" });
    expect(error.problems.map((p) => p.variable)).toEqual(["COMPACTD_INTAKE_THREADS", "COMPACTD_INTAKE_THREAD_MIN_BYTES", "COMPACTD_INTAKE_DEADLINE_MS"]);
    expect(error.message).toContain('COMPACTD_INTAKE_DEADLINE_MS="50": expected an integer from 100 to 600000');
    expect(error.message).toContain('COMPACTD_INTAKE_THREADS="0": expected an integer from 1 to 64');
    expect(loadConfig({ COMPACTD_INTAKE_THREAD_MIN_BYTES: "0" }).intakeThreadMinBytes).toBe(0);
  });

  it.each([
    ["COMPACTD_JOB_BACKOFF_MS", 3_600_000],
    ["COMPACTD_LOCK_DURATION_MS", 3_600_000],
    ["COMPACTD_STALLED_INTERVAL_MS", 3_600_000],
    ["COMPACTD_CALLBACK_BACKOFF_MS", 86_400_000],
    ["COMPACTD_CALLBACK_MAX_BACKOFF_MS", 86_400_000],
    ["COMPACTD_CALLBACK_TIMEOUT_MS", 600_000],
    ["COMPACTD_REDIS_COMMAND_TIMEOUT_MS", 600_000],
    ["COMPACTD_SHUTDOWN_TIMEOUT_MS", 3_600_000],
  ])("refuses %s above %i ms, a delay no timer would keep, naming the range", (variable, max) => {
    for (const value of [String(max + 1), String(2 ** 31)]) expectRefusedAlone(variable, value, `expected an integer from 1 to ${max}`);
    const field = CONFIG_VARIABLES.find((v) => v.env === variable)!.field;
    expect(loadConfig({ [variable]: String(max), COMPACTD_CALLBACK_MAX_BACKOFF_MS: "86400000" })[field]).toBe(variable === "COMPACTD_CALLBACK_MAX_BACKOFF_MS" ? 86_400_000 : max);
  });

  it.each([
    ["COMPACTD_CALLBACK_MAX_AGE_HOURS", "720", "720.5", "expected a positive number of at most 720"],
    ["COMPACTD_RESULT_TTL_SECONDS", "2592000", "2592001", "expected an integer from 1 to 2592000"],
    ["WORKER_CONCURRENCY", "1000", "1001", "expected an integer from 1 to 1000"],
    ["COMPACTD_CALLBACK_CONCURRENCY", "1000", "1001", "expected an integer from 1 to 1000"],
    ["COMPACTD_CALLBACK_HOST_CONCURRENCY", "1000", "1001", "expected an integer from 1 to 1000"],
    ["COMPACTD_MAX_STALLED_COUNT", "100", "101", "expected an integer from 1 to 100"],
    ["COMPACTD_BODY_LIMIT_BYTES", "536870912", "536870913", "expected an integer from 1 to 536870912"],
    ["COMPACTD_MAX_INTAKES", "10000", "10001", "expected an integer from 1 to 10000"],
    ["COMPACTD_MAX_INTAKE_BYTES", "17179869184", "17179869185", "expected an integer from 1 to 17179869184"],
    ["COMPACTD_MAX_WAITERS", "100000", "100001", "expected an integer from 1 to 100000"],
    ["COMPACTD_MAX_BACKLOG", "10000000", "10000001", "expected an integer from 1 to 10000000"],
    ["COMPACTD_MAX_BATCH_ITEMS", "10000", "10001", "expected an integer from 1 to 10000"],
  ])("refuses %s above %s, where a typo would retry, keep or take on far too much, naming the range", (variable, max, over, expected) => {
    for (const value of [over, "240000000000"]) expectRefusedAlone(variable, value, expected);
    const doc = CONFIG_VARIABLES.find((v) => v.env === variable)!;
    expect(loadConfig({ [variable]: max })[doc.field]).toBe(Number(max));
    expect(doc.description).toContain(`at most ${max}`);
  });

  it("names the tenant but never prints a key when the API key pairs are wrong", () => {
    const error = problemsOf({ COMPACTD_API_KEYS: "acme:s3cret-one,missingcolon-s3cret,globex:s3cret-one,:s3cret-two,ok:" });
    expect(error.problems).toHaveLength(1);
    const [problem] = error.problems;
    expect(problem?.variable).toBe("COMPACTD_API_KEYS");
    expect(problem?.expected).toContain('entry 2 has no ":" between tenant and key');
    expect(problem?.expected).toContain('tenants "acme" and "globex" share a key');
    expect(problem?.expected).toContain('entry 4 has tenant ""');
    expect(problem?.expected).toContain('entry 5 (tenant "ok") has an empty key');
    expect(error.message).not.toContain("s3cret");
  });

  it("refuses webhook secrets that would not decode to the key a receiver holds, without printing them", () => {
    for (const bad of ["shh", "whsec_", "whsec_not*base64*at*all*xxxxxxxxxxxxxxxxxxxxxxxxxxx", `whsec_${randomBytes(8).toString("base64")}`]) {
      const error = problemsOf({ COMPACTD_WEBHOOK_SECRET: bad });
      expect(error.problems[0]?.variable).toBe("COMPACTD_WEBHOOK_SECRET");
      expect(error.problems[0]?.expected).toContain('"whsec_" followed by the base64 of at least 24 random bytes');
      expect(error.message).toContain(`<hidden, ${bad.length} characters>`);
      if (bad.length > 6) expect(error.message).not.toContain(bad);
    }
  });

  it.each([
    ["ANTHROPIC_BASE_URL", "http://api.exam\tple.com"],
    ["OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318/\u0001"],
    ["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "https://collector/v1/\u00a0traces"],
    ["REDIS_URL", "redis://redis:6379\n/0"],
  ])("refuses %s with white space or a control character inside, which the URL parser would drop or encode unseen", (variable, value) => {
    const error = problemsOf({ [variable]: value });
    expect(error.problems.map((p) => p.variable)).toEqual([variable]);
    expect(error.problems[0]!.expected).toContain("without spaces or control characters");
  });

  it("hides the password of a wrong Redis URL", () => {
    const error = problemsOf({ REDIS_URL: "http://admin:hunter2@redis:6379" });
    expect(error.message).not.toContain("hunter2");
    expect(error.message).toContain("<credentials>@redis:6379");
  });

  it("takes Redis Cluster nodes as a list of URLs", () => {
    const config = loadConfig({ REDIS_CLUSTER_NODES: " rediss://:pw@node-a:7000, rediss://:pw@node-b:7001 " });
    expect(config.redisClusterNodes).toEqual(["rediss://:pw@node-a:7000", "rediss://:pw@node-b:7001"]);
    expect(loadConfig({}).redisClusterNodes).toBeUndefined();
  });

  it("names each wrong Redis Cluster node and hides every password", () => {
    const error = problemsOf({ REDIS_CLUSTER_NODES: "redis://:hunter2@a:7000,rediss://:hunter2@b:7001,http://c:7002,redis://d:7003/2,d:7004" });
    expect(error.problems.map((p) => p.variable)).toEqual(["REDIS_CLUSTER_NODES"]);
    expect(error.message).toContain("entry 2 mixes redis:// and rediss://");
    expect(error.message).toContain("entry 3 does not start with redis:// or rediss://");
    expect(error.message).toContain("entry 4 names a database, which a cluster does not have");
    expect(error.message).toContain("entry 5 does not start with redis:// or rediss://");
    expect(error.message).not.toContain("hunter2");
  });

  it("refuses a callback backoff cap below the first backoff", () => {
    const error = problemsOf({ COMPACTD_CALLBACK_BACKOFF_MS: "5000", COMPACTD_CALLBACK_MAX_BACKOFF_MS: "1000" });
    expect(error.message).toContain("COMPACTD_CALLBACK_MAX_BACKOFF_MS");
    expect(error.message).toContain("at least COMPACTD_CALLBACK_BACKOFF_MS (5000)");
  });

  it("refuses compaction attempts whose last retry would wait beyond a day, naming the variable and the most it may be", () => {
    // BullMQ waits COMPACTD_JOB_BACKOFF_MS × 2^(n−1) after failed attempt n: before the last of 17 attempts at 2000 ms, 18.2 hours.
    expect(loadConfig({ COMPACTD_JOB_ATTEMPTS: "17" }).jobAttempts).toBe(17);
    expect(loadConfig({ COMPACTD_JOB_ATTEMPTS: "6", COMPACTD_JOB_BACKOFF_MS: "3600000" }).jobAttempts).toBe(6);
    for (const [attempts, backoff, most] of [["18", "2000", 17], ["28", "2000", 17], ["7", "3600000", 6], ["28", "2", 27]] as const) {
      const error = problemsOf({ COMPACTD_JOB_ATTEMPTS: attempts, COMPACTD_JOB_BACKOFF_MS: backoff });
      expect(error.problems.map((p) => p.variable)).toEqual(["COMPACTD_JOB_ATTEMPTS"]);
      expect(error.message).toContain(`COMPACTD_JOB_ATTEMPTS="${attempts}": expected at most ${most} with COMPACTD_JOB_BACKOFF_MS=${backoff}`);
    }
  });

  it("refuses more compaction attempts than the shortest backoff allows by their own range, which the Helm chart's schema can state", () => {
    expect(loadConfig({ COMPACTD_JOB_ATTEMPTS: "28", COMPACTD_JOB_BACKOFF_MS: "1" }).jobAttempts).toBe(28);
    for (const value of ["29", "1000000"]) expectRefusedAlone("COMPACTD_JOB_ATTEMPTS", value, "expected an integer from 1 to 28");
  });

  it("accepts queue prefixes with and without a hash tag but not with a broken one", () => {
    expect(loadConfig({ COMPACTD_QUEUE_PREFIX: "app:{compactd}" }).queuePrefix).toBe("app:{compactd}");
    expect(loadConfig({ COMPACTD_QUEUE_PREFIX: "compactd" }).queuePrefix).toBe("compactd");
    for (const bad of ["{compactd", "compactd}", "{}", "a b", "{t1}\u0007", "a\u0000{b}", "{t\u0085}"]) {
      expect(problemsOf({ COMPACTD_QUEUE_PREFIX: bad }).problems[0]?.variable).toBe("COMPACTD_QUEUE_PREFIX");
    }
  });
});

describe("CONFIG_VARIABLES", () => {
  it("documents every Config field exactly once with its variable, default and description", () => {
    const fields = CONFIG_VARIABLES.map((v) => v.field).sort();
    expect(fields).toEqual(Object.keys(loadConfig({})).sort());
    for (const variable of CONFIG_VARIABLES) {
      expect(variable.env).toMatch(/^[A-Z][A-Z0-9_]*$/);
      expect(variable.default).not.toBe("");
      expect(variable.description).not.toBe("");
    }
    expect(CONFIG_VARIABLES.find((v) => v.env === "COMPACTD_BODY_LIMIT_BYTES")?.default).toBe("`20971520` (20 MiB)");
  });
});
