import { describe, expect, it } from "vitest";
import { SummarizationStalledError } from "../../src/core/errors.js";
import { withStallWatchdog } from "../../src/core/stallWatchdog.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("stall watchdog", () => {
  it("keeps a slow stream alive as long as it reports progress", async () => {
    const result = await withStallWatchdog(200, undefined, async (signal, onProgress) => {
      for (let i = 0; i < 12; i++) {
        await sleep(30); // 360 ms in all, far beyond the 200 ms timeout
        expect(signal.aborted).toBe(false);
        onProgress();
      }
      return "done";
    });
    expect(result).toBe("done");
  });

  it.each([2 ** 31, 2 ** 32 + 5, Number.MAX_SAFE_INTEGER])(
    "waits out a timeout of %i ms, beyond what one Node timer holds, instead of firing at once",
    async (timeoutMs) => {
      const result = await withStallWatchdog(timeoutMs, undefined, async (signal, onProgress) => {
        await sleep(20);
        onProgress();
        await sleep(20);
        expect(signal.aborted).toBe(false);
        return "done";
      });
      expect(result).toBe("done");
    },
  );

  it("does not count a wait the work announces (a retry-after) as a stall, and watches again once it resumes", async () => {
    const result = await withStallWatchdog(50, undefined, async (signal, onProgress, onWaiting) => {
      onWaiting();
      await sleep(200); // four timeouts' worth of waiting on purpose
      expect(signal.aborted).toBe(false);
      onProgress();
      return "done";
    });
    expect(result).toBe("done");
    const silentAfterWait = withStallWatchdog(50, undefined, async (_signal, onProgress, onWaiting) => {
      onWaiting();
      await sleep(20);
      onProgress();
      return new Promise<string>(() => {});
    });
    await expect(silentAfterWait).rejects.toBeInstanceOf(SummarizationStalledError);
  });

  it("cancels a stream that goes silent and reports a stall", async () => {
    let sawAbort = false;
    const run = withStallWatchdog(50, undefined, (signal) => {
      return new Promise<string>((_, reject) => {
        signal.addEventListener("abort", () => {
          sawAbort = true;
          reject(new Error("aborted by signal"));
        });
      });
    });
    await expect(run).rejects.toBeInstanceOf(SummarizationStalledError);
    expect(sawAbort).toBe(true);
  });

  it("gives up on work that ignores its signal", async () => {
    const run = withStallWatchdog(30, undefined, () => new Promise<string>(() => {}));
    await expect(run).rejects.toBeInstanceOf(SummarizationStalledError);
  });

  it("never takes a result that arrives after the abort as complete", async () => {
    const run = withStallWatchdog(30, undefined, async () => {
      await sleep(60); // the stream "ends quietly" after the abort
      return "partial";
    });
    await expect(run).rejects.toBeInstanceOf(SummarizationStalledError);
  });

  it("passes the caller's cancellation through with its own reason", async () => {
    const caller = new AbortController();
    const reason = new Error("caller went away");
    const run = withStallWatchdog(10_000, caller.signal, () => new Promise<string>(() => {}));
    setTimeout(() => caller.abort(reason), 10);
    await expect(run).rejects.toBe(reason);
  });

  it("refuses to start for a caller that has already cancelled", async () => {
    const caller = new AbortController();
    caller.abort(new Error("already gone"));
    let started = false;
    await expect(
      withStallWatchdog(1_000, caller.signal, async () => {
        started = true;
        return "x";
      }),
    ).rejects.toThrow("already gone");
    expect(started).toBe(false);
  });
});
