/**
 * Counts and times every API response in `compactd_http_*`, from fastify's
 * `onResponse` hook, which runs for every answer: routes, the error handler's
 * 4xx and 5xx, fastify's own refusals (413, 415) and 404s.
 *
 * The route label is the route's pattern (`/v1/compactions/:id`), so job ids
 * never become series; a URL no route matches is `unmatched`.
 */
import type { FastifyInstance } from "fastify";
import type { Metrics } from "../metrics/metrics.js";

export function countHttpRequests(app: FastifyInstance, metrics: Metrics): void {
  app.addHook("onResponse", async (request, reply) => {
    const labels = { method: request.method, route: request.routeOptions.url ?? "unmatched" };
    metrics.httpRequestsTotal.inc({ ...labels, status_code: String(reply.statusCode) });
    metrics.httpRequestDuration.observe(labels, reply.elapsedTime / 1000);
  });
}
