import type { LookupFunction } from "node:net";
import { refusalOf } from "./addressPolicy.js";
import type { CallbackAllow } from "./callbackAllow.js";
import type { ResolveHost } from "./resolveHost.js";

/**
 * The connect-time half of the SSRF guard: a `lookup` for `node:http(s)`
 * requests that refuses to hand the socket a forbidden address.
 *
 * Checking the URL when it is submitted is not enough: DNS can answer
 * differently an hour later (rebinding), so the address is judged again at
 * the moment the socket connects to it, and no other address is ever
 * connected to. (`fetch` would ignore this; deliveries use `node:http`.)
 */

/** A callback target the address policy forbids; never worth retrying. */
export class CallbackRefusedError extends Error {
  readonly code = "callback_refused";
  constructor(message: string) {
    super(message);
    this.name = "CallbackRefusedError";
  }
}

/** Why `hostname` at `address` may not receive callbacks, or `null` when it may. */
export function refusalFor(allow: CallbackAllow, hostname: string, address: string): string | null {
  if (allow.allowsHost(hostname) || allow.allowsAddress(address)) return null;
  const reason = refusalOf(address);
  return reason === null ? null : `${hostname} resolves to ${address}, ${reason}`;
}

/**
 * Every address a name resolves to must pass, not just the first: the socket
 * may fall back to any of them (happy eyeballs), and a name mixing public and
 * private answers is an attack, not a misconfiguration.
 */
export function guardedLookup(allow: CallbackAllow, resolve: ResolveHost): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname).then(
      (resolved) => {
        const wanted = options.family === 4 || options.family === "IPv4" ? 4 : options.family === 6 || options.family === "IPv6" ? 6 : 0;
        const addresses = resolved.filter(({ family }) => wanted === 0 || family === wanted);
        for (const { address } of addresses) {
          const refusal = refusalFor(allow, hostname, address);
          if (refusal !== null) return callback(new CallbackRefusedError(refusal), "");
        }
        const [first] = addresses;
        if (first === undefined) {
          const error: NodeJS.ErrnoException = new Error(`${hostname} has no address`);
          error.code = "ENOTFOUND";
          return callback(error, "");
        }
        if (options.all) callback(null, addresses.map(({ address, family }) => ({ address, family })));
        else callback(null, first.address, first.family);
      },
      (error: NodeJS.ErrnoException) => callback(error, ""),
    );
  };
}
