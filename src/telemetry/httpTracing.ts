/**
 * A server span for each API request, continuing the caller's trace: an
 * agent that sends a W3C `traceparent` finds compactd's spans (the request,
 * the enqueue, the worker's, the summarizer's, the callback's) in its own
 * trace. Probes and metrics scrapes are not traced: they would be most of
 * the spans and tell nothing.
 *
 * The span's context is made active for everything the request does after
 * the hook: fastify runs the body parser, the handler and the onResponse
 * hooks in the async context the request hooks continue in (it wraps the
 * parser in an AsyncResource), so the enqueue span and the latency exemplar
 * (httpMetrics.ts) find it, for a slow upload and a body parsed on an intake
 * thread too (tested).
 */
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Span } from "@opentelemetry/api";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { tracer } from "./tracing.js";

const UNTRACED_ROUTES = new Set(["/healthz", "/readyz", "/metrics"]);

export function traceHttpRequests(app: FastifyInstance): void {
  const spans = new WeakMap<FastifyRequest, Span>();
  app.addHook("onRequest", (request, _reply, done) => {
    const route = request.routeOptions.url;
    if (route === undefined || UNTRACED_ROUTES.has(route)) {
      done();
      return;
    }
    const parent = propagation.extract(ROOT_CONTEXT, request.headers);
    const span = tracer().startSpan(
      `${request.method} ${route}`,
      { kind: SpanKind.SERVER, attributes: { "http.request.method": request.method, "http.route": route, "url.scheme": request.protocol } },
      parent,
    );
    spans.set(request, span);
    const active = trace.setSpan(parent, span);
    context.with(active, done);
  });
  const end = (request: FastifyRequest, status: number | undefined): void => {
    const span = spans.get(request);
    if (span === undefined) return;
    spans.delete(request);
    if (status === undefined) span.setStatus({ code: SpanStatusCode.ERROR, message: "the client went away" });
    else {
      span.setAttribute("http.response.status_code", status);
      if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    }
    span.end();
  };
  app.addHook("onResponse", async (request, reply) => end(request, reply.statusCode));
  app.addHook("onRequestAbort", async (request) => end(request, undefined));
}
