/**
 * The README's curl examples, run with real curl against a real `compactd
 * dev` started with nothing configured, as a newcomer would. Only the ports
 * change (the test's dev and receiver listen on free ones, not 8080 and 3000)
 * and the ids a command prints are put where the README writes `<id>`.
 */
import { spawn, execFile } from "node:child_process";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deleteKeysUnder, testPrefix } from "../helpers/redisTestPrefix.js";
import { freePort } from "../helpers/freePort.js";
import { repoRoot } from "../helpers/repoRoot.js";
import { cliPath } from "../helpers/runCli.js";
import { waitUntil } from "../helpers/waitUntil.js";
import { startWebhookReceiver, type WebhookReceiver } from "../webhooks/webhookReceiver.js";

const run = promisify(execFile);


/** The shell commands of the README's API example, continuation lines joined, comments dropped. */
async function readmeCurlCommands(): Promise<string[]> {
  const readme = await readFile(path.join(repoRoot, "README.md"), "utf8");
  const section = readme.slice(readme.indexOf("### API"));
  const block = section.slice(section.indexOf("```sh\n") + 6, section.indexOf("\n```", section.indexOf("```sh\n")));
  return block
    .replace(/\\\n\s*/g, "")
    .split("\n")
    .filter((line) => line.startsWith("curl "));
}

const SAMPLE_RECEIVER = "127.0.0.1:3000";
const prefix = testPrefix("readme-curl");
let receiver: WebhookReceiver;
let files: string;
let dev: { port: number; stderr: () => string; stop: () => Promise<number | null> };

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  // The request files, with the sample receiver's port swapped for the test's.
  files = await mkdtemp(path.join(tmpdir(), "compactd-readme-"));
  for (const name of ["compaction-request.json", "batch-request.json"]) {
    const text = await readFile(path.join(repoRoot, "examples", name), "utf8");
    await writeFile(path.join(files, name), text.replaceAll(SAMPLE_RECEIVER, `127.0.0.1:${receiver.port}`));
  }
  const port = await freePort();
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: String(port), COMPACTD_QUEUE_PREFIX: prefix };
  for (const unset of ["ANTHROPIC_API_KEY", "COMPACTD_API_KEYS", "COMPACTD_WEBHOOK_SECRET", "COMPACTD_CALLBACK_ALLOW"]) delete env[unset];
  const child = spawn(process.execPath, [cliPath, "dev"], { cwd: repoRoot, env });
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on("close", resolve));
  dev = {
    port,
    stderr: () => stderr,
    stop: async () => {
      child.kill("SIGTERM");
      return exited;
    },
  };
  await waitUntil(() => stderr.includes("API and worker on"), "compactd dev has started", 90_000);
}, 120_000);

afterAll(async () => {
  await dev?.stop();
  await receiver?.stop();
  await deleteKeysUnder(prefix);
});

describe("the README's curl examples against compactd dev", () => {
  it("says at start-up where it listens, with which key, secret and summarizer", () => {
    const lines = dev.stderr();
    expect(lines).toContain(`compactd dev: API and worker on http://127.0.0.1:${dev.port} (Bearer dev)`);
    expect(lines).toMatch(/^compactd dev: COMPACTD_WEBHOOK_SECRET is not set; signing callbacks with whsec_[A-Za-z0-9+/=]+$/m);
    expect(lines.match(/ANTHROPIC_API_KEY is not set; every result will be an offline summary/g)).toHaveLength(1);
  });

  it("work as written: a compaction, its result, a cancel, a batch, and signed callbacks for each", async () => {
    const secret = /signing callbacks with (whsec_\S+)/.exec(dev.stderr())![1]!;
    const ids: Record<string, string> = {};
    const outputs: Record<string, unknown>[] = [];
    for (const command of await readmeCurlCommands()) {
      const concrete = command
        .replaceAll("localhost:8080", `localhost:${dev.port}`)
        .replaceAll("@examples/", `@${files}/`)
        .replace(/<(id|batchId)>/g, (_, name: string) => ids[name]!);
      const { stdout } = await run("sh", ["-c", concrete], { cwd: repoRoot });
      const output = JSON.parse(stdout) as Record<string, unknown>;
      outputs.push(output);
      if (command.includes("/v1/compactions -H")) ids.id = output.id as string;
      if (command.includes("/v1/compactions/batch")) ids.batchId = output.id as string;
    }
    const [queued, finished, cancel, batch, batchView] = outputs;
    expect(queued).toMatchObject({ status: "queued" });
    expect(finished).toMatchObject({ id: ids.id, status: "completed", conversationId: "conv-42" });
    const session = JSON.parse(await readFile(path.join(repoRoot, "examples/session.json"), "utf8")) as { system: string };
    expect((finished!.result as { system: string }).system).toBe(session.system);
    expect(cancel).toMatchObject({ error: { code: "job_finished" } });
    expect(batch).toMatchObject({ id: ids.batchId });
    expect((batch!.items as { id?: string }[]).filter((item) => item.id !== undefined)).toHaveLength(2);
    expect(batchView).toMatchObject({ id: ids.batchId });

    // One callback for the compaction, one per batch item, and batch.completed.
    await waitUntil(() => receiver.received.length >= 4, "four callbacks arrive", 90_000);
    const events = receiver.received.map((callback) => ({
      path: callback.path,
      event: new Webhook(secret).verify(callback.body, callback.headers as Record<string, string>) as Record<string, unknown>,
    }));
    expect(events.map(({ path: p, event }) => `${p} ${event.type as string}`).sort()).toEqual([
      "/hooks/compactd batch.completed",
      "/hooks/compactd compaction.completed",
      "/hooks/compactd compaction.completed",
      "/hooks/conv-44 compaction.completed",
    ]);
  }, 180_000);

  it("send the bundled session as it is in examples/session.json", async () => {
    const read = async (name: string) => JSON.parse(await readFile(path.join(repoRoot, "examples", name), "utf8")) as Record<string, unknown>;
    const session = await read("session.json");
    const single = await read("compaction-request.json");
    const batch = (await read("batch-request.json")) as { items: Record<string, unknown>[] };
    for (const request of [single, ...batch.items]) {
      expect(request.system).toEqual(session.system);
      expect(request.messages).toEqual(session.messages);
    }
  });

  it("stops on SIGTERM with exit code 0", async () => {
    expect(await dev.stop()).toBe(0);
  }, 60_000);
});
