/**
 * Cancels a summarization stream that has gone silent.
 *
 * A total timeout would kill a long but healthy summary of a huge history; no
 * timeout leaves an agent blocked forever on a connection that died without a
 * reset. So the timer covers the wait for the first event and restarts on
 * every event of any kind (thinking and pings included). Response headers
 * alone are not progress: a gateway that answers 200 and then hangs is the
 * case this exists for.
 */
import { SummarizationStalledError } from "./errors.js";
import { timerDelay } from "./timerDelay.js";

/**
 * Runs `work` with a signal that aborts when `onProgress` has not been called
 * for `timeoutMs`, or when `callerSignal` aborts. Rejects with
 * {@link SummarizationStalledError} on a stall and with the caller's abort
 * reason on cancellation, even if `work` ignores its signal.
 */
export async function withStallWatchdog<T>(
  timeoutMs: number,
  callerSignal: AbortSignal | undefined,
  work: (signal: AbortSignal, onProgress: () => void) => Promise<T>,
): Promise<T> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const arm = () => {
    clearTimeout(timer);
    timer = setTimeout(() => controller.abort(new SummarizationStalledError(timeoutMs)), timerDelay(timeoutMs));
  };
  const onCallerAbort = () => controller.abort(callerSignal!.reason);
  if (callerSignal?.aborted) throw callerSignal.reason;
  callerSignal?.addEventListener("abort", onCallerAbort, { once: true });

  let rejectOnAbort: (reason: unknown) => void = () => {};
  const aborted = new Promise<never>((_, reject) => (rejectOnAbort = reject));
  controller.signal.addEventListener("abort", () => rejectOnAbort(controller.signal.reason), { once: true });
  arm();
  try {
    const result = await Promise.race([work(controller.signal, arm), aborted]);
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
