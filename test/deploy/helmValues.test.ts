import { readFileSync } from "node:fs";
import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import { CONFIG_VARIABLES, loadConfig } from "../../src/config.js";
import { LLM_SECONDS } from "../../src/metrics/metrics.js";
import { COMPACTION_QUEUE } from "../../src/queue/queueNames.js";
import { changed, configEnv, helperBody, readChartFile, readSchema, readValues, ROOT, validateValues } from "./chart.js";
import { parseDockerfile } from "./dockerfile.js";

/** Variables the chart takes from Secrets (`secrets.*`, `redis.*`), not from values.config. */
const NOT_IN_CONFIG = ["ANTHROPIC_API_KEY", "COMPACTD_API_KEYS", "COMPACTD_WEBHOOK_SECRET", "REDIS_URL", "REDIS_CLUSTER_NODES"];

describe("values.yaml and values.schema.json", () => {
  it("values.yaml validates against the schema", () => {
    expect(validateValues(readValues()), JSON.stringify(validateValues.errors)).toBe(true);
  });

  it.each([
    ["a worker concurrency of 0", "config.WORKER_CONCURRENCY", "0"],
    ["a port that is not a number", "config.PORT", "http"],
    ["a misspelt environment variable", "config.WORKER_CONCURENCY", "10"],
    ["a queue prefix whose brace forms no hash tag", "config.COMPACTD_QUEUE_PREFIX", "{compactd"],
    ["a Redis URL with an http scheme", "redis.url", "http://redis:6379"],
    ["a webhook secret without the whsec_ prefix", "secrets.webhookSecret", "c2VjcmV0"],
    ["an unknown KEDA trigger", "keda.trigger", "rabbitmq"],
    ["a grace period of 0", "worker.terminationGracePeriodSeconds", 0],
    ["an unknown top-level key", "workers", {}],
    ["a degraded-ratio threshold above 1", "metrics.prometheusRule.degradedRatio", 1.5],
  ])("rejects %s", (_name, path, value) => {
    expect(validateValues(changed(path, value))).toBe(false);
  });

  it("rejects values that say nowhere where Redis is", () => {
    const values = changed("redis.url", "");
    expect(validateValues(values)).toBe(false);
    (values.redis as Record<string, unknown>).deploy = true;
    expect(validateValues(values)).toBe(true);
  });

  it("requires a Prometheus address when KEDA scales on the Prometheus trigger", () => {
    const values = changed("keda.enabled", true);
    (values.keda as Record<string, unknown>).trigger = "prometheus";
    expect(validateValues(values)).toBe(false);
    (values.keda as { prometheus: { serverAddress: string } }).prometheus.serverAddress = "http://prometheus:9090";
    expect(validateValues(values)).toBe(true);
  });

  it("allows scaling workers to zero on the Prometheus trigger: the API pods export the queue gauge too", () => {
    const values = changed("keda.enabled", true);
    (values.keda as { trigger: string; prometheus: { serverAddress: string } }).trigger = "prometheus";
    (values.keda as { prometheus: { serverAddress: string } }).prometheus.serverAddress = "http://prometheus:9090";
    (values.worker as { autoscaling: { minReplicas: number } }).autoscaling.minReplicas = 0;
    expect(validateValues(values)).toBe(true);
  });

  it("offers as the overflow latency bound only bucket bounds of the latency histogram", () => {
    const slo = (readSchema() as { properties: { metrics: { properties: { prometheusRule: { properties: { slo: { properties: { overflowLatencySeconds: { enum: number[] } } } } } } } } })
      .properties.metrics.properties.prometheusRule.properties.slo.properties.overflowLatencySeconds;
    expect(slo.enum).toEqual(LLM_SECONDS);
  });

  it("holds every non-secret variable of the service's environment table in config, and no other", () => {
    const expected = CONFIG_VARIABLES.map((variable) => variable.env).filter((env) => !NOT_IN_CONFIG.includes(env));
    expect(Object.keys(readValues().config as object).sort()).toEqual(expected.sort());
    const schemaConfig = (readSchema().properties as Record<string, { properties: object }>).config!.properties;
    expect(Object.keys(schemaConfig).sort()).toEqual(expected.sort());
  });

  it("configures the service exactly as its own defaults do, so the chart overrides nothing silently", () => {
    const fromChart = loadConfig({ ...configEnv(readValues()), REDIS_URL: "redis://redis:6379" });
    const defaults = loadConfig({ REDIS_URL: "redis://redis:6379" });
    expect(fromChart).toEqual(defaults);
  });

  it("gives the API and the workers longer to stop than the shutdown deadline (and the API's preStop sleep)", () => {
    const values = readValues() as {
      config: { COMPACTD_SHUTDOWN_TIMEOUT_MS: string };
      api: { terminationGracePeriodSeconds: number; preStopSleepSeconds: number };
      worker: { terminationGracePeriodSeconds: number };
    };
    const shutdownSeconds = Math.ceil(Number(values.config.COMPACTD_SHUTDOWN_TIMEOUT_MS) / 1000);
    expect(values.worker.terminationGracePeriodSeconds).toBeGreaterThan(shutdownSeconds);
    expect(values.api.terminationGracePeriodSeconds).toBeGreaterThan(shutdownSeconds + values.api.preStopSleepSeconds);
  });

  it("runs the containers as the image's non-root user, read-only, without privilege escalation or capabilities", () => {
    const values = readValues() as {
      podSecurityContext: { runAsNonRoot: boolean; runAsUser: number; seccompProfile: { type: string } };
      containerSecurityContext: {
        allowPrivilegeEscalation: boolean;
        readOnlyRootFilesystem: boolean;
        runAsNonRoot: boolean;
        capabilities: { drop: string[] };
      };
    };
    expect(values.podSecurityContext.runAsNonRoot).toBe(true);
    expect(values.podSecurityContext.seccompProfile.type).toBe("RuntimeDefault");
    expect(values.containerSecurityContext).toEqual({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      capabilities: { drop: ["ALL"] },
    });
    const image = parseDockerfile(readFileSync(new URL("Dockerfile", ROOT), "utf8"));
    const user = image.stages.at(-1)!.instructions.filter((i) => i.keyword === "USER").at(-1)!.args;
    expect(String(values.podSecurityContext.runAsUser)).toBe(user.split(":")[0]);
  });

  it("deploys the version of package.json", () => {
    const chart = parse(readChartFile("Chart.yaml")) as { apiVersion: string; appVersion: string; version: string };
    const pkg = JSON.parse(readFileSync(new URL("package.json", ROOT), "utf8")) as { version: string };
    expect(chart.apiVersion).toBe("v2");
    expect(chart.appVersion).toBe(pkg.version);
    expect(chart.version).toMatch(/^\d+\.\d+\.\d+/);
  });

  it("names the compaction queue as the service does", () => {
    expect(helperBody("compactd.compactionQueue")).toBe(COMPACTION_QUEUE);
  });
});
