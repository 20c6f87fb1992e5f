/**
 * `compactd serve` as a child process (the build: `npm test` builds dist/
 * first; run `npm run build` before running such a test file alone), for
 * tests that need the API's event loop to be its own: liveness under heavy
 * bodies, shutdown on SIGTERM.
 */
import { spawn, type ChildProcess } from "node:child_process";
import type { Config } from "../../src/config.js";
import { freePort } from "./freePort.js";
import { repoRoot } from "./repoRoot.js";
import { cliPath } from "./runCli.js";
import { TEST_API_KEYS, TEST_WEBHOOK_SECRET } from "./serviceConfig.js";

export interface ApiProcess {
  readonly child: ChildProcess;
  readonly base: string;
  /** Resolves with the exit code once the process has exited. */
  readonly exited: Promise<number | null>;
  /** What it wrote to stderr so far. */
  stderr(): string;
}

/** Starts `compactd serve` on a free port and resolves once it listens. */
export async function startApiProcess(config: Config, env: Record<string, string> = {}): Promise<ApiProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, [cliPath, "serve"], {
    cwd: repoRoot,
    env: {
      PATH: process.env.PATH,
      PORT: String(port),
      REDIS_URL: config.redisUrl,
      COMPACTD_QUEUE_PREFIX: config.queuePrefix,
      COMPACTD_API_KEYS: TEST_API_KEYS,
      COMPACTD_WEBHOOK_SECRET: TEST_WEBHOOK_SECRET,
      COMPACTD_LOG_LEVEL: "error",
      ...env,
    },
    stdio: ["ignore", "ignore", "pipe"],
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  await new Promise<void>((resolve, reject) => {
    const listening = (): void => {
      if (stderr.includes("API listening")) resolve();
    };
    child.stderr!.on("data", listening);
    void exited.then((code) => reject(new Error(`compactd serve exited with ${code} before listening:\n${stderr}`)));
  });
  return { child, base: `http://127.0.0.1:${port}`, exited, stderr: () => stderr };
}
