/**
 * Service configuration for tests: the real environment table (so every test
 * config passes the same validation a deployment does) with a fresh queue
 * prefix, short locks and stall checks, fast retries, and ports picked by
 * the OS (0, which the table itself refuses, is set afterwards).
 */
import { loadConfig, type Config } from "../../src/config.js";
import { TEST_REDIS_URL, testPrefix } from "./redisTestPrefix.js";

/** A valid Standard Webhooks secret for tests. */
export const TEST_WEBHOOK_SECRET = `whsec_${Buffer.from("compactd-test-secret-0123456789").toString("base64")}`;

export const TEST_TENANTS = { acme: "key-acme", globex: "key-globex" } as const;

/** COMPACTD_API_KEYS for the test tenants, for configs and for service processes' environments. */
export const TEST_API_KEYS = Object.entries(TEST_TENANTS)
  .map(([tenant, key]) => `${tenant}:${key}`)
  .join(",");

export function serviceConfig(name: string, env: Record<string, string> = {}): Config {
  const config = loadConfig({
    REDIS_URL: TEST_REDIS_URL,
    COMPACTD_QUEUE_PREFIX: testPrefix(name),
    COMPACTD_API_KEYS: TEST_API_KEYS,
    COMPACTD_WEBHOOK_SECRET: TEST_WEBHOOK_SECRET,
    WORKER_CONCURRENCY: "8",
    COMPACTD_JOB_ATTEMPTS: "3",
    COMPACTD_JOB_BACKOFF_MS: "50",
    COMPACTD_LOCK_DURATION_MS: "2000",
    COMPACTD_STALLED_INTERVAL_MS: "500",
    COMPACTD_MAX_STALLED_COUNT: "3",
    COMPACTD_CALLBACK_BACKOFF_MS: "100",
    COMPACTD_CALLBACK_MAX_BACKOFF_MS: "500",
    COMPACTD_CALLBACK_TIMEOUT_MS: "2000",
    COMPACTD_SHUTDOWN_TIMEOUT_MS: "3000",
    // Tests that read the logs give the worker their own logger.
    COMPACTD_LOG_LEVEL: "silent",
    ...env,
  });
  return { ...config, port: 0, metricsPort: 0 };
}

export function bearer(tenant: keyof typeof TEST_TENANTS): { authorization: string } {
  return { authorization: `Bearer ${TEST_TENANTS[tenant]}` };
}
