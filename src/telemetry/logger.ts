/**
 * The service's structured logs: one JSON object per line (pino, the logger
 * fastify already uses), so a log pipeline can filter by job, tenant or
 * outcome without parsing prose.
 *
 * What a line may carry is deliberately narrow: ids (job, tenant,
 * conversation, webhook), the compaction reason, outcomes and degraded
 * reasons, provider status codes and attempt numbers, durations and token
 * counts. Never conversation content, summaries, request bodies or callback
 * payloads: those are the users' data and stay in Redis.
 */
import { pino, type Logger, type LoggerOptions } from "pino";

export type { Logger };

export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Options for the service's loggers, fastify's included, so API and worker lines look alike. */
export function loggerOptions(component: string, level: LogLevel): LoggerOptions {
  return {
    level,
    base: { service: "compactd", component },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
  };
}

/** A logger writing JSON lines to `destination` (stdout by default). */
export function createLogger(component: string, level: LogLevel, destination: NodeJS.WritableStream = process.stdout): Logger {
  return pino(loggerOptions(component, level), destination);
}
