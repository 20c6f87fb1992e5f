/**
 * The HTTP API as a fastify app, without listening: tests drive it with
 * `app.inject`, `runApi` puts it on a port.
 *
 * Bad input of any kind is a 4xx in the one error shape, never a 500: fastify's
 * own refusals (malformed JSON, oversized body, wrong media type, poisoned
 * prototypes, bad URLs) are mapped by the error handler below, what Node's
 * HTTP parser refuses before fastify sees it by unparsedRequests.ts, and
 * everything the routes refuse is an ApiError. A 5xx means the service itself is in
 * trouble: 503 when Redis cannot serve it now (redisFaults.ts), 500 for a bug.
 */
import Fastify, { type FastifyError, type FastifyInstance, type FastifyReply } from "fastify";
import type { Config } from "../config.js";
import { exposition } from "../metrics/exposition.js";
import { createMetrics, type Metrics } from "../metrics/metrics.js";
import type { DestinationStream, LoggerOptions } from "pino";
import { redisFaultOf } from "../queue/redisFaults.js";
import { probeShards } from "../queue/redisReadiness.js";
import { shutdownDeadline, type ShutdownDeadline } from "../queue/shutdownDeadline.js";
import type { ResolveHost } from "../webhooks/resolveHost.js";
import { ApiError, redisUnavailable } from "./apiError.js";
import { createApiServices } from "./apiServices.js";
import { answerUnparsedRequests } from "./unparsedRequests.js";
import { createIntakeAdmission } from "./intakeAdmission.js";
import { carriesBody, registerJsonBodies } from "./jsonBodies.js";
import { registerRequestDecoding } from "./requestEncoding.js";
import { registerBatchRoutes } from "./batchRoutes.js";
import { badUrlReason } from "./badUrlReason.js";
import { registerCompactionRoutes } from "./compactionRoutes.js";
import { countHttpRequests, countUnroutedAnswer } from "./httpMetrics.js";
import { openapiDocument } from "./openapiDocument.js";
import { ErrorCodes } from "../client/errorCodes.js";
import { traceHttpRequests } from "../telemetry/httpTracing.js";
import { tracingOn } from "../telemetry/tracing.js";

export interface ApiDeps {
  /** Shared with the worker in `compactd dev`; a fresh registry otherwise. */
  readonly metrics?: Metrics;
  /** Tests make callback hosts resolve where they like. */
  readonly resolveHost?: ResolveHost;
  /**
   * What bounds closing the app's services, and records what they abandoned
   * (runApi reports it); one starting when the app closes otherwise.
   */
  readonly shutdown?: ShutdownDeadline;
  /** Log requests and errors (fastify's pino logger, as JSON lines, to `stream` or stdout); off by default. */
  readonly logger?: boolean | (LoggerOptions & { readonly stream?: DestinationStream });
}

/** Fastify's own errors for input it refuses, and what the API calls them. */
const FASTIFY_INPUT_ERRORS: Readonly<Record<string, { status: number; code: string; message?: (config: Config, url: string) => string }>> = {
  FST_ERR_CTP_BODY_TOO_LARGE: {
    status: 413,
    code: ErrorCodes.bodyTooLarge,
    message: (config) => `the body is larger than the limit of ${config.bodyLimitBytes} bytes (COMPACTD_BODY_LIMIT_BYTES; a compressed body counts as it decompresses)`,
  },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { status: 415, code: ErrorCodes.unsupportedMediaType, message: () => "send the body as application/json" },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { status: 400, code: ErrorCodes.invalidContentLength },
  FST_ERR_CTP_EMPTY_JSON_BODY: { status: 400, code: ErrorCodes.invalidJson, message: () => "the body is empty; send a JSON object" },
  FST_ERR_CTP_INVALID_JSON_BODY: { status: 400, code: ErrorCodes.invalidJson },
  // The URL is named by what is wrong with it, never repeated: it may be thousands of characters.
  FST_ERR_BAD_URL: { status: 400, code: ErrorCodes.invalidUrl, message: (_config, url) => badUrlReason(url) },
  FST_ERR_INVALID_URL: { status: 400, code: ErrorCodes.invalidUrl, message: () => "the URL is not valid" },
  FST_ERR_MAX_PARAM_LENGTH: { status: 414, code: ErrorCodes.uriTooLong, message: () => "a segment of the URL's path is longer than any id this API issues" },
};

/**
 * The longest URL taken; a longer one is refused with 414 before it is
 * routed. No URL of this API comes near it (the longest is a job's, with
 * `?wait=`, under a hundred characters); without it, a URL as long as
 * Node's header limit allows reached the 404 and was repeated in its message.
 */
const MAX_URL_LENGTH = 2048;

export async function buildApp(config: Config, deps: ApiDeps = {}): Promise<FastifyInstance> {
  const metrics = deps.metrics ?? createMetrics();
  const app = Fastify({
    logger: deps.logger ?? false,
    bodyLimit: config.bodyLimitBytes,
    return503OnClosing: true,
    clientErrorHandler: answerUnparsedRequests(metrics),
    frameworkErrors: (error, request, reply) => {
      const apiError = inputError(error, config, request.url);
      countUnroutedAnswer(metrics, request.method, apiError.statusCode);
      void (reply as FastifyReply).code(apiError.statusCode).send(apiError.body());
    },
  });
  const services = createApiServices(config, metrics, deps.resolveHost, (error) => app.log.warn(`redis: ${error.message}`));
  // Only JSON bodies: a text/plain body would otherwise reach the routes as a string.
  app.removeContentTypeParser(["text/plain"]);
  registerJsonBodies(app, config.intakeThreadMinBytes);

  app.setErrorHandler<FastifyError>((error, request, reply) => {
    const apiError = error instanceof ApiError ? error : inputError(error, config, request.url);
    if (apiError.statusCode >= 500) request.log.error(error);
    void reply.code(apiError.statusCode).headers(apiError.headers).send(apiError.body());
  });
  // On the headers alone, before any body is read: an unknown route is a 404
  // whatever its body is (malformed, too large, in another charset), where
  // fastify's not-found route read and parsed it first and answered 400 or 415.
  app.addHook("onRequest", async (request) => {
    if (request.url.length > MAX_URL_LENGTH) {
      throw new ApiError(414, ErrorCodes.uriTooLong, `the URL is longer than the ${MAX_URL_LENGTH} characters taken`);
    }
    if (request.is404) throw new ApiError(404, ErrorCodes.notFound, `no route ${request.method} ${request.url.split("?")[0]}`);
  });
  // Heavy work in flight on the intake threads is abandoned as shutdown begins (answered 503, nothing queued),
  // so it cannot hold the process past its deadline; what runs on the event loop is short and finishes.
  app.addHook("preClose", () => services.intake.close());
  const shutdown = deps.shutdown ?? shutdownDeadline(config.shutdownTimeoutMs);
  app.addHook("preClose", async () => shutdown.begin());
  app.addHook("onClose", () => services.close(shutdown));
  // Once closing, every answer ends its connection. fastify closes the idle
  // kept-alive connections once, when it starts closing; a request answered
  // after that (a 503 for work abandoned at shutdown) would leave its
  // connection idle but open, holding the close until the client's
  // keep-alive ran out or the shutdown deadline cut it.
  let closing = false;
  app.addHook("preClose", async () => {
    closing = true;
  });
  app.addHook("onSend", async (_request, reply) => {
    if (closing) void reply.header("connection", "close");
  });

  const document = openapiDocument(config.maxBatchItems);
  if (tracingOn()) traceHttpRequests(app);
  countHttpRequests(app, metrics, document);
  app.get("/openapi.json", async () => document);
  app.get("/healthz", async () => ({ status: "ok" }));
  app.get("/readyz", async (_request, reply) => {
    const probe = await probeShards(services.redis, services.queues);
    return reply.code(probe.ok ? 200 : 503).send(probe.ok ? { status: "ok" } : { status: "unavailable", redis: probe.fault });
  });
  app.get("/metrics", async (request, reply) => {
    const scrape = await exposition(metrics.registry, request.headers.accept);
    return reply.header("content-type", scrape.contentType).send(scrape.body);
  });
  // The tenant's routes. Both checks run on the headers alone, before fastify
  // reads the body: a wrong key or an API at its intake limit costs a few
  // microseconds, not the reading and parsing of 20 MiB.
  const admission = createIntakeAdmission({
    maxIntakes: config.maxIntakes,
    maxBytes: config.maxIntakeBytes,
    bodyLimitBytes: config.bodyLimitBytes,
  });
  app.decorateRequest("tenant", "");
  await app.register(async (tenantRoutes) => {
    tenantRoutes.addHook("onRequest", async (request) => {
      request.tenant = services.authenticate(request.headers.authorization);
    });
    tenantRoutes.addHook("onRequest", async (request, reply) => {
      if (carriesBody(request.method)) await admission.admit(request, reply);
    });
    registerRequestDecoding(tenantRoutes, (request, bytes) => admission.grow(request, bytes));
    registerCompactionRoutes(tenantRoutes, services);
    registerBatchRoutes(tenantRoutes, services);
  });
  return app;
}

/**
 * An error that is not an ApiError: fastify's refusals of input become 4xx in
 * the API's shape; a Redis fault a retry can fix is a 503; anything else is a bug.
 */
function inputError(error: FastifyError | Error, config: Config, url: string): ApiError {
  const code = (error as FastifyError).code;
  const known = code === undefined ? undefined : FASTIFY_INPUT_ERRORS[code];
  if (known !== undefined) return new ApiError(known.status, known.code, known.message?.(config, url) ?? error.message);
  const status = (error as FastifyError).statusCode;
  if (status !== undefined && status >= 400 && status < 500) return new ApiError(status, ErrorCodes.badRequest, error.message);
  const fault = redisFaultOf(error);
  if (fault !== undefined) return redisUnavailable(fault);
  return new ApiError(500, ErrorCodes.internalError, "internal error");
}
