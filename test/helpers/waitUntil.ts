/**
 * Polls `condition` until it holds, failing with `what` after `timeoutMs`.
 * A bounded wait for an outcome, never a timing assertion: tests that need
 * something to have happened wait for it here instead of sleeping.
 */
export async function waitUntil(
  condition: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 10_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
