/**
 * A real Prometheus (Debian's `prometheus` package, the binary operators
 * run) on a free loopback port with its own temporary storage, scraping the
 * given targets every second, for end-to-end checks of dashboards and alert
 * expressions against what a test drove.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { stringify } from "yaml";
import { freePort } from "../helpers/freePort.js";
import { waitUntil } from "../helpers/waitUntil.js";

export interface ScrapeTarget {
  readonly job: string;
  /** host:port */
  readonly address: string;
  readonly labels: Readonly<Record<string, string>>;
}

export interface QuerySample {
  readonly metric: Record<string, string>;
  readonly value: number;
}

export interface RunningPrometheus {
  readonly url: string;
  /**
   * An instant query, at the current time or at `time` (Unix seconds); NaN
   * values are kept (a histogram without observations).
   */
  query(expr: string, time?: number): Promise<QuerySample[]>;
  close(): Promise<void>;
}

export async function startPrometheus(targets: readonly ScrapeTarget[]): Promise<RunningPrometheus> {
  const dir = mkdtempSync(path.join(tmpdir(), "compactd-prometheus-"));
  const configFile = path.join(dir, "prometheus.yml");
  writeFileSync(
    configFile,
    stringify({
      global: { scrape_interval: "1s", scrape_timeout: "1s", evaluation_interval: "1s" },
      scrape_configs: targets.map((target) => ({
        job_name: target.job,
        static_configs: [{ targets: [target.address], labels: target.labels }],
      })),
    }),
  );
  const port = await freePort();
  const child: ChildProcess = spawn(
    "prometheus",
    [
      `--config.file=${configFile}`,
      `--storage.tsdb.path=${path.join(dir, "data")}`,
      `--web.listen-address=127.0.0.1:${port}`,
      "--log.level=warn",
    ],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const url = `http://127.0.0.1:${port}`;
  const close = async (): Promise<void> => {
    if (child.exitCode === null) {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitUntil(async () => (await fetch(`${url}/-/ready`).catch(() => undefined))?.ok === true, "Prometheus is ready", 30_000);
  } catch (error) {
    await close();
    throw new Error(`${(error as Error).message}; its log: ${stderr}`);
  }
  return {
    url,
    async query(expr, time) {
      const params = new URLSearchParams({ query: expr, ...(time !== undefined && { time: String(time) }) });
      const response = await fetch(`${url}/api/v1/query?${params}`);
      const body = (await response.json()) as { status: string; error?: string; data?: { resultType: string; result: unknown } };
      if (body.status !== "success") throw new Error(`query failed: ${body.error ?? response.status}: ${expr}`);
      const { resultType, result } = body.data!;
      if (resultType === "scalar") return [{ metric: {}, value: Number((result as [number, string])[1]) }];
      return (result as { metric: Record<string, string>; value: [number, string] }[]).map((sample) => ({
        metric: sample.metric,
        value: Number(sample.value[1]),
      }));
    },
    close,
  };
}
