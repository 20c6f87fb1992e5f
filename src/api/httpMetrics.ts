/**
 * Counts and times every API response in `compactd_http_*`, from fastify's
 * `onResponse` hook, which runs for every answer: routes, the error handler's
 * 4xx and 5xx, fastify's own refusals (413, 415) and 404s.
 *
 * The route label is the route's pattern (`/v1/compactions/:id`), so job ids
 * never become series; a URL no route matches is `unmatched`.
 *
 * Every answer the OpenAPI document lists is exported at 0 from start-up, like
 * the other counters (metrics.ts says why); statuses it does not list (a 503
 * while Redis is away, a 500) appear with their first occurrence.
 */
import type { FastifyInstance } from "fastify";
import { observeLatency } from "../metrics/exemplars.js";
import type { Metrics } from "../metrics/metrics.js";
import type { OpenApiDocument } from "./openapiDocument.js";

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
    const labels = { method: request.method, route: request.routeOptions.url ?? "unmatched" };
    metrics.httpRequestsTotal.inc({ ...labels, status_code: String(reply.statusCode) });
    observeLatency(metrics.httpRequestDuration, labels, reply.elapsedTime / 1000);
  });
}
