import type { Logger } from "../telemetry/logger.js";
import type { DeliveryResult } from "./deliverCallback.js";

/**
 * Logs a delivery attempt that ends its callback because the receiver
 * answered for good: a 2xx took it, a 410 Gone refused it. Both stop the
 * retries, but only the first reached anyone: an operator following a
 * webhook-id must not read "delivered" for a callback the receiver turned
 * away. The first delivery and the callback queue's worker both log through
 * here, so the two paths say the same thing.
 */
export function logAnswered(log: Logger, fields: Readonly<Record<string, unknown>>, result: DeliveryResult & { outcome: "delivered" | "gone" }): void {
  const line = { ...fields, outcome: result.outcome, detail: result.detail };
  if (result.outcome === "gone") log.info(line, "callback refused by its receiver (410 Gone): not sent again");
  else log.debug(line, "callback delivered");
}
