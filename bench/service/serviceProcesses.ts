/**
 * The service as it is deployed: `node bin/compactd.js serve` and
 * `node bin/compactd.js worker` as child processes of the bench (built first
 * by `npm run build`), configured only through the environment table, on
 * loopback, with a queue prefix of the bench's own.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { readValues } from "../../test/deploy/chart.js";
import { freePort } from "../../test/helpers/freePort.js";
import { TEST_API_KEYS, TEST_TENANTS, TEST_WEBHOOK_SECRET } from "../../test/helpers/serviceConfig.js";
import { TEST_REDIS_URL } from "../../test/helpers/redisTestPrefix.js";

const CLI = fileURLToPath(new URL("../../bin/compactd.js", import.meta.url));

/**
 * `BENCH_CPU_PROF_DIR=/some/dir npm run bench:service` writes a V8 CPU profile
 * of every service process there when it exits, to see where a job's time goes.
 */
const PROFILE_DIR = process.env.BENCH_CPU_PROF_DIR;
const NODE_FLAGS = PROFILE_DIR === undefined ? [] : ["--cpu-prof", `--cpu-prof-dir=${PROFILE_DIR}`];

/**
 * The node flags the worker processes run with: the chart's
 * (`worker.nodeFlags` in helm/compactd/values.yaml), as a deployed worker
 * runs (`node <flags> bin/compactd.js worker`). `BENCH_WORKER_NODE_FLAGS`
 * replaces them, to measure another heap setting before recommending it
 * (docs/OPERATIONS.md, "What sets a worker's RSS"); set to an empty string,
 * the worker runs with Node's defaults.
 */
export const WORKER_NODE_FLAGS: readonly string[] = nodeFlagsFrom(process.env.BENCH_WORKER_NODE_FLAGS) ?? chartWorkerNodeFlags();

/** Node flags given in an environment variable, space-separated (an empty value: none); undefined when it is not set. */
export function nodeFlagsFrom(value: string | undefined): string[] | undefined {
  return value?.split(" ").filter((flag) => flag !== "");
}

function chartWorkerNodeFlags(): string[] {
  return (readValues() as { worker: { nodeFlags?: string[] } }).worker.nodeFlags ?? [];
}

/** The tenant the bench submits as. */
export const BENCH_TENANT = "acme";
export const BENCH_API_KEY = TEST_TENANTS[BENCH_TENANT];

/** Longer than any start-up on a loaded two-core machine, short enough to fail a broken run quickly. */
const START_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 15_000;

export interface ServiceEnvOptions {
  readonly queuePrefix: string;
  /** The fake Anthropic API's base URL. */
  readonly anthropicBaseUrl: string;
  readonly workerConcurrency: number;
}

/** The environment both processes read: everything on loopback, callbacks allowed to 127.0.0.1. */
export function serviceEnv(options: ServiceEnvOptions): Record<string, string> {
  return {
    PATH: process.env.PATH ?? "",
    NODE_ENV: "production",
    REDIS_URL: TEST_REDIS_URL,
    COMPACTD_QUEUE_PREFIX: options.queuePrefix,
    COMPACTD_API_KEYS: TEST_API_KEYS,
    COMPACTD_WEBHOOK_SECRET: TEST_WEBHOOK_SECRET,
    COMPACTD_CALLBACK_ALLOW: "127.0.0.1",
    ANTHROPIC_API_KEY: "sk-bench",
    ANTHROPIC_BASE_URL: options.anthropicBaseUrl,
    WORKER_CONCURRENCY: String(options.workerConcurrency),
    COMPACTD_SHUTDOWN_TIMEOUT_MS: "5000",
  };
}

export interface ServiceProcess {
  readonly pid: number;
  /** The API's port (serve only). */
  readonly port: number;
  /** The worker's /metrics port (worker only). */
  readonly metricsPort: number;
  /** Sends SIGTERM and waits for the exit (SIGKILL past the deadline). */
  stop(): Promise<void>;
}

/**
 * Starts `compactd serve` or `compactd worker` (this checkout's, or the
 * `bin/compactd.js` at `cli`; a worker with `workerNodeFlags`) and resolves
 * once it says it is listening or consuming (the line the CLI prints after
 * start-up).
 */
export async function startServiceProcess(
  kind: "serve" | "worker",
  env: Record<string, string>,
  cli: string = CLI,
  workerNodeFlags: readonly string[] = WORKER_NODE_FLAGS,
): Promise<ServiceProcess> {
  const port = await freePort();
  const metricsPort = await freePort();
  const child = spawn(process.execPath, [...NODE_FLAGS, ...(kind === "worker" ? workerNodeFlags : []), cli, kind], {
    env: { ...env, PORT: String(port), METRICS_PORT: String(metricsPort) },
    // The API logs every request (fastify's logger): written to /dev/null as a deployment would ship it off.
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr!.setEncoding("utf8");
  child.stderr!.on("data", (chunk: string) => {
    stderr = (stderr + chunk).slice(-4_000);
  });
  const ready = kind === "serve" ? /API listening on port/ : /worker consuming/;
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => fail(new Error(`compactd ${kind} did not start within ${START_TIMEOUT_MS} ms`)), START_TIMEOUT_MS);
    const onData = (): void => {
      if (!ready.test(stderr)) return;
      cleanup();
      resolve();
    };
    const onExit = (code: number | null): void => fail(new Error(`compactd ${kind} exited with ${code}`));
    function cleanup(): void {
      clearTimeout(timer);
      child.stderr!.off("data", onData);
      child.off("exit", onExit);
    }
    function fail(error: Error): void {
      cleanup();
      child.kill("SIGKILL");
      reject(new Error(`${error.message}; stderr:\n${stderr}`));
    }
    child.stderr!.on("data", onData);
    child.on("exit", onExit);
  });
  return { pid: child.pid!, port, metricsPort, stop: () => stop(child) };
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, "exit");
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), STOP_TIMEOUT_MS);
  await exited;
  clearTimeout(timer);
}
