/**
 * A compaction goes from its POST to its callback without libuv's thread
 * pool. The pool is shared by everything in a process that blocks: file
 * system calls, `dns.lookup` (callback hosts, new summarizer connections;
 * libuv lets lookups take at most half of the pool) and zlib's asynchronous
 * API, through which every job used to compress its payload and its result.
 * Here every thread of the pool is held for the whole job, by opens of a
 * FIFO that no one writes, and the job must still go through.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, openSync, closeSync } from "node:fs";
import { open, stat, type FileHandle } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { markedRequest } from "../helpers/markedConversation.js";
import { startServiceHarness, type ServiceHarness } from "../helpers/serviceHarness.js";
import { waitUntil } from "../helpers/waitUntil.js";

/** libuv's pool size: its default unless the environment sets it. */
const POOL_THREADS = Number(process.env.UV_THREADPOOL_SIZE ?? 4);

/** Long enough for the whole job on a loaded machine; the pool stays held throughout. */
const JOB_DEADLINE_MS = 30_000;

interface HeldPool {
  /** Lets every held thread go. */
  release(): Promise<void>;
}

/** Occupies every thread of libuv's pool until released: an open of a FIFO blocks until a writer opens it. */
function holdThreadPool(): HeldPool {
  const dir = mkdtempSync(path.join(tmpdir(), "compactd-pool-"));
  const fifo = path.join(dir, "held");
  execFileSync("mkfifo", [fifo]);
  const opens: Promise<FileHandle>[] = Array.from({ length: POOL_THREADS }, () => open(fifo, "r"));
  return {
    async release() {
      // A writer's open lets every blocked reader's open return; closing it gives them end of file.
      closeSync(openSync(fifo, "w"));
      await Promise.all(opens.map(async (opened) => (await opened).close()));
    },
  };
}

let h: ServiceHarness;
beforeAll(async () => {
  h = await startServiceHarness("pool-held");
});
afterAll(async () => {
  await h.close();
});

/** POSTs a compaction that calls back to `/<marker>`; resolves with the POST's answer, or status 0 past the deadline. */
async function submitWithCallback(marker: string): Promise<{ status: number; body: Record<string, unknown> }> {
  return Promise.race([
    h.submit(markedRequest(marker, { callbackUrl: h.receiver.url(`/${marker}`) })),
    sleep(JOB_DEADLINE_MS).then(() => ({ status: 0, body: {} as Record<string, unknown> })),
  ]);
}

async function callbackTo(marker: string): Promise<unknown> {
  await waitUntil(() => h.receiver.received.some((callback) => callback.path === `/${marker}`), `the callback to /${marker} arrives`, JOB_DEADLINE_MS);
  return JSON.parse(h.receiver.received.find((callback) => callback.path === `/${marker}`)!.body);
}

describe("with libuv's thread pool held", () => {
  it("takes a compaction in, completes it and delivers its callback", async () => {
    // A service that has been running: its Redis connections are up (ioredis
    // reads its own package.json through the pool when a process first
    // connects) and its modules loaded.
    const warmUp = await submitWithCallback("pool-free");
    expect(warmUp.status).toBe(202);
    await callbackTo("pool-free");

    const pool = holdThreadPool();
    try {
      // The pool is held: a call that needs it does not come back.
      const poolAnswered = await Promise.race([stat(tmpdir()).then(() => true), sleep(500).then(() => false)]);
      expect(poolAnswered, "a file system call came back: the pool is not held").toBe(false);

      const submitted = await submitWithCallback("pool-held");
      expect(submitted.status, `the POST did not come back while the pool was held: ${JSON.stringify(submitted.body)}`).toBe(202);
      const view = await h.view(String(submitted.body.id), JOB_DEADLINE_MS / 1000);
      expect(view.status).toBe("completed");
      expect(await callbackTo("pool-held")).toMatchObject({ type: "compaction.completed" });
    } finally {
      await pool.release();
    }
  });
});
