import { isIP } from "node:net";
import { ErrorCodes } from "../client/errorCodes.js";
import { refusalOf } from "./addressPolicy.js";
import type { CallbackAllow } from "./callbackAllow.js";
import { refusalFor } from "./guardedLookup.js";
import { type ResolveHost, systemResolveHost } from "./resolveHost.js";
import { parseUrl } from "../http/parseUrl.js";

/**
 * The submission-time half of the SSRF guard: everything about a callback URL
 * that can be judged before a job exists is judged here, so a tenant learns
 * about a bad URL from a 400 instead of from a callback that never comes.
 * Delivery judges the connected address again (guardedLookup.ts).
 */

/**
 * A callback URL the service will not call; the API answers 400 naming
 * `field`. The message says what is wrong with the URL without naming the
 * field, which the API puts in front of it (`items[2].callbackUrl: …`).
 */
export class CallbackUrlError extends Error {
  readonly code = ErrorCodes.invalidCallbackUrl;
  readonly field = "callbackUrl";
  constructor(message: string) {
    super(message);
    this.name = "CallbackUrlError";
  }
}

const MAX_URL_LENGTH = 2048;

const POLICY = "only public addresses, or those the operator allows in COMPACTD_CALLBACK_ALLOW, receive callbacks";

/** The URL's host without the brackets an IPv6 literal carries in URLs. */
function callbackHost(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, "$1");
}

/**
 * The checks that need no DNS: syntax, scheme, credentials, port, and the address
 * itself when the host is a literal (sockets never call `lookup` for those,
 * so delivery repeats this check). WHATWG parsing has already turned
 * `0x7f.1` or `2130706433` into `127.0.0.1`.
 */
export function parseCallbackUrl(raw: unknown, allow: CallbackAllow): URL {
  if (typeof raw !== "string") throw new CallbackUrlError("must be a string");
  if (raw.length > MAX_URL_LENGTH) throw new CallbackUrlError(`is longer than ${MAX_URL_LENGTH} characters`);
  const url = parseUrl(raw);
  if (url === undefined) throw new CallbackUrlError("is not a URL");
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new CallbackUrlError(`scheme ${url.protocol} is not allowed; use http or https`);
  }
  if (url.username !== "" || url.password !== "") {
    throw new CallbackUrlError("must not carry credentials; receivers authenticate callbacks by their signature");
  }
  // Port 0 parses, but no socket connects to it: every delivery would fail.
  if (url.port === "0") throw new CallbackUrlError("port 0 cannot be connected to; name the receiver's port, or none for the scheme's default");
  const host = callbackHost(url);
  if (isIP(host) !== 0 && !allow.allowsAddress(host)) {
    const reason = refusalOf(host);
    if (reason !== null) throw new CallbackUrlError(`${host} is ${reason}; ${POLICY}`);
  }
  return url;
}

/**
 * Throws {@link CallbackUrlError} unless `raw` is a URL compactd will POST
 * callbacks to: http(s), no credentials, a port other than 0, and every address its host resolves
 * to public or allowed by `allow` (COMPACTD_CALLBACK_ALLOW, compiled once at
 * start-up by parseCallbackAllow). A name
 * that does not exist is refused; a transient DNS failure is not (delivery
 * checks again and retries).
 */
export async function checkCallbackUrl(
  raw: unknown,
  allow: CallbackAllow,
  { resolveHost = systemResolveHost }: { resolveHost?: ResolveHost } = {},
): Promise<void> {
  const host = callbackHost(parseCallbackUrl(raw, allow));
  if (isIP(host) !== 0 || allow.allowsHost(host)) return;
  let resolved;
  try {
    resolved = await resolveHost(host);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOTFOUND" || code === "ENODATA") throw new CallbackUrlError(`host ${host} does not resolve`);
    return;
  }
  for (const { address } of resolved) {
    const refusal = refusalFor(allow, host, address);
    if (refusal !== null) throw new CallbackUrlError(`${refusal}; ${POLICY}`);
  }
}
