/**
 * The ports the services listen on when PORT and METRICS_PORT are unset:
 * read by the configuration and named in the CLI's help, which must not load
 * the configuration (and its validators) to print it.
 */

/** The API's HTTP port. */
export const DEFAULT_API_PORT = 8080;

/** The worker's `/metrics` and `/healthz` port: OpenTelemetry's Prometheus exporter listens there by default. */
export const DEFAULT_METRICS_PORT = 9464;
