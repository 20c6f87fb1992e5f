/**
 * `compactd worker` as a child process (the build: `npm test` builds dist/
 * first; run `npm run build` before running such a test file alone), for
 * tests that kill workers or need a worker's event loop of its own.
 */
import { spawn, type ChildProcess } from "node:child_process";
import type { Config } from "../../src/config.js";
import type { FakeAnthropic } from "./fakeAnthropic.js";
import { cliPath } from "./runCli.js";
import { repoRoot } from "./repoRoot.js";
import { TEST_WEBHOOK_SECRET } from "./serviceConfig.js";
import { freePort } from "./freePort.js";

export interface WorkerProcess {
  readonly child: ChildProcess;
  readonly exited: Promise<number | null>;
}

/** Starts `compactd worker` and resolves once it says it is consuming. */
export async function startWorkerProcess(config: Config, fake: FakeAnthropic, env: Record<string, string> = {}): Promise<WorkerProcess> {
  const child = spawn(process.execPath, [cliPath, "worker"], {
    cwd: repoRoot,
    env: {
      PATH: process.env.PATH,
      REDIS_URL: config.redisUrl,
      COMPACTD_QUEUE_PREFIX: config.queuePrefix,
      ANTHROPIC_API_KEY: "sk-test",
      ANTHROPIC_BASE_URL: fake.url,
      COMPACTD_WEBHOOK_SECRET: TEST_WEBHOOK_SECRET,
      COMPACTD_CALLBACK_ALLOW: "127.0.0.1",
      COMPACTD_CALLBACK_BACKOFF_MS: "100",
      COMPACTD_CALLBACK_MAX_BACKOFF_MS: "500",
      COMPACTD_LOCK_DURATION_MS: String(config.lockDurationMs),
      COMPACTD_STALLED_INTERVAL_MS: String(config.stalledIntervalMs),
      COMPACTD_SHUTDOWN_TIMEOUT_MS: "3000",
      METRICS_PORT: String(await freePort()),
      ...env,
    },
    stdio: ["ignore", "ignore", "pipe"],
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  let stderr = "";
  await new Promise<void>((resolve, reject) => {
    child.stderr!.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
      if (stderr.includes("worker consuming")) resolve();
    });
    void exited.then((code) => reject(new Error(`compactd worker exited with ${code} before consuming:\n${stderr}`)));
  });
  return { child, exited };
}
