/**
 * Counts and times every API response in `compactd_http_*`, from fastify's
 * `onResponse` hook, which runs for nearly every answer: routes, the error
 * handler's 4xx and 5xx, fastify's own refusals (413, 415) and 404s; the
 * answers it does not see are counted by the functions below.
 *
 * The route label is the route's pattern (`/v1/compactions/:id`), so job ids
 * never become series; a URL no route matches is `unmatched`. A request
 * Node's HTTP parser refused before fastify saw it (431, a 400 for bytes
 * that are not HTTP) is counted by unparsedRequests.ts as method `unknown`,
 * route `unparsed`. Both kinds are counted but not timed: Node's parser hands
 * over a socket with no start to time from (a 408 would record its whole
 * timeout), and fastify's router refusals (`countUnroutedAnswer`) skip the
 * hooks that time a request. OPERATIONS.md tells dashboards what that means.
 *
 * Every answer the OpenAPI document lists is exported at 0 from start-up, like
 * the other counters (metrics.ts says why); statuses it does not list (a 503
 * while Redis is away, a 500) appear with their first occurrence.
 */
import type { FastifyInstance } from "fastify";
import { observeLatency } from "../metrics/exemplars.js";
import type { Metrics } from "../metrics/metrics.js";
import type { OpenApiDocument } from "./openapiDocument.js";

/** The route label of a request no route matched. */
const UNMATCHED = "unmatched";

/**
 * Counts an answer fastify's `frameworkErrors` gave (a URL its router
 * could not take: a %-escape that does not decode, a path segment over its
 * limit). fastify answers those outside every route and runs no
 * `onResponse` hook for them, so the hook below never sees them.
 */
export function countUnroutedAnswer(metrics: Metrics, method: string, status: number): void {
  metrics.httpRequestsTotal.inc({ method, route: UNMATCHED, status_code: String(status) });
}

/**
 * The labels of a request Node's HTTP parser refused (unparsedRequests.ts): its
 * method and URL were never known, or not known to be what they seemed.
 */
const UNPARSED = { method: "unknown", route: "unparsed" } as const;

/** Counts an answer to a request that never reached fastify (see UNPARSED). */
export function countUnparsedRequest(metrics: Metrics, status: number): void {
  metrics.httpRequestsTotal.inc({ ...UNPARSED, status_code: String(status) });
}

export function countHttpRequests(app: FastifyInstance, metrics: Metrics, document: OpenApiDocument): void {
  for (const [path, operations] of Object.entries(document.paths)) {
    const route = path.replace(/\{(\w+)\}/g, ":$1");
    for (const [method, operation] of Object.entries(operations)) {
      const labels = { method: method.toUpperCase(), route };
      for (const status of Object.keys(operation.responses)) metrics.httpRequestsTotal.inc({ ...labels, status_code: status }, 0);
      metrics.httpRequestDuration.zero(labels);
    }
  }
  app.addHook("onResponse", async (request, reply) => {
    const labels = { method: request.method, route: request.routeOptions.url ?? UNMATCHED };
    metrics.httpRequestsTotal.inc({ ...labels, status_code: String(reply.statusCode) });
    observeLatency(metrics.httpRequestDuration, labels, reply.elapsedTime / 1000);
  });
}
