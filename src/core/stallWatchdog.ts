/**
 * Cancels a summarization stream that has gone silent.
 *
 * A total timeout would kill a long but healthy summary of a huge history; no
 * timeout leaves an agent blocked forever on a connection that died without a
 * reset. So the timer covers the wait for the first event and restarts on
 * every event of content (thinking included). Response headers alone are not
 * progress, nor are keep-alive pings: a gateway that answers 200 and then
 * hangs, or keeps the connection open with pings and nothing else, is the
 * case this exists for.
 *
 * Waiting on purpose is not a stall either: when a provider answers 429 or
 * 529 with `retry-after`, the SDK waits that long before asking again, with
 * no stream open to be silent. The summarizer says so (`onWaiting`), and the
 * timer stops until the next attempt reports in (`onProgress`).
 */
import { SummarizationStalledError } from "./errors.js";
import { timerDelay } from "./timerDelay.js";

/**
 * Runs `work` with a signal that aborts when `onProgress` has not been called
 * for `timeoutMs`, unless `onWaiting` was called since, or when
 * `callerSignal` aborts. Rejects with
 * {@link SummarizationStalledError} on a stall and with the caller's abort
 * reason on cancellation, even if `work` ignores its signal.
 */
export async function withStallWatchdog<T>(
  timeoutMs: number,
  callerSignal: AbortSignal | undefined,
  work: (signal: AbortSignal, onProgress: () => void, onWaiting: () => void) => Promise<T>,
): Promise<T> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const arm = () => {
    clearTimeout(timer);
    timer = setTimeout(() => controller.abort(new SummarizationStalledError(timeoutMs)), timerDelay(timeoutMs));
  };
  const pause = () => clearTimeout(timer);
  const onCallerAbort = () => controller.abort(callerSignal!.reason);
  if (callerSignal?.aborted) throw callerSignal.reason;
  callerSignal?.addEventListener("abort", onCallerAbort, { once: true });

  let rejectOnAbort: (reason: unknown) => void = () => {};
  const aborted = new Promise<never>((_, reject) => (rejectOnAbort = reject));
  controller.signal.addEventListener("abort", () => rejectOnAbort(controller.signal.reason), { once: true });
  arm();
  try {
    const result = await Promise.race([work(controller.signal, arm, pause), aborted]);
    // A stream aborted mid-way may end quietly with a partial text: never take it as complete.
    if (controller.signal.aborted) throw controller.signal.reason;
    return result;
  } catch (err) {
    throw controller.signal.aborted ? controller.signal.reason : err;
  } finally {
    clearTimeout(timer);
    callerSignal?.removeEventListener("abort", onCallerAbort);
  }
}
