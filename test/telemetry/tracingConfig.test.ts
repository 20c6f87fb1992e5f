import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config.js";
import { tracingWanted } from "../../src/telemetry/tracing.js";

const wanted = (env: Record<string, string>): boolean => tracingWanted(loadConfig(env));

describe("which OTEL_* variables turn tracing on", () => {
  it("is off with none set, on with an endpoint or OTEL_TRACES_EXPORTER=otlp", () => {
    expect(wanted({})).toBe(false);
    expect(wanted({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" })).toBe(true);
    expect(wanted({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://collector:4318/v1/traces" })).toBe(true);
    expect(wanted({ OTEL_TRACES_EXPORTER: "otlp" })).toBe(true);
    // Variables that configure an exporter without choosing one do not.
    expect(wanted({ OTEL_SERVICE_NAME: "compactd", OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf" })).toBe(false);
  });

  it("is off with OTEL_TRACES_EXPORTER=none or OTEL_SDK_DISABLED=true, whatever else is set", () => {
    expect(wanted({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318", OTEL_TRACES_EXPORTER: "none" })).toBe(false);
    expect(wanted({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318", OTEL_SDK_DISABLED: "true" })).toBe(false);
    expect(wanted({ OTEL_TRACES_EXPORTER: "otlp", OTEL_SDK_DISABLED: "TRUE" })).toBe(false);
    expect(wanted({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318", OTEL_SDK_DISABLED: "false" })).toBe(true);
  });

  it("refuses at start-up what the bundled exporter cannot do, naming the variable", () => {
    const problems = (env: Record<string, string>): string[] => {
      try {
        loadConfig(env);
        return [];
      } catch (error) {
        if (!(error instanceof ConfigError)) throw error;
        return error.problems.map((problem) => `${problem.variable}: ${problem.expected}`);
      }
    };
    expect(problems({ OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" })).toEqual(["OTEL_EXPORTER_OTLP_PROTOCOL: expected one of http/protobuf"]);
    expect(problems({ OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "http/json" })).toEqual(["OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: expected one of http/protobuf"]);
    expect(problems({ OTEL_TRACES_EXPORTER: "zipkin" })).toEqual(["OTEL_TRACES_EXPORTER: expected one of otlp, none"]);
    expect(problems({ OTEL_SDK_DISABLED: "yes" })).toEqual(["OTEL_SDK_DISABLED: expected one of true, false"]);
    expect(problems({ OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318" })).toEqual(["OTEL_EXPORTER_OTLP_ENDPOINT: expected a URL starting with http:// or https://, without spaces or control characters"]);
  });
});
