import { lookup } from "node:dns/promises";

/**
 * How callback host names become addresses. The system resolver
 * (getaddrinfo: /etc/hosts, then DNS) is what a connection would use, so it is
 * what the guard judges. Injectable so tests can make a name resolve to
 * 127.0.0.1 without touching /etc/hosts or the network.
 */
export type ResolveHost = (hostname: string) => Promise<readonly ResolvedAddress[]>;

export interface ResolvedAddress {
  readonly address: string;
  readonly family: 4 | 6;
}

/** Lookups under way, by host name: see {@link systemResolveHost}. */
const lookingUp = new Map<string, Promise<readonly ResolvedAddress[]>>();

/**
 * The system resolver, at most one lookup of a name at a time: a caller
 * asking for a name already being looked up shares that lookup.
 *
 * getaddrinfo runs on libuv's thread pool, and libuv lets lookups take at
 * most half of it, two threads of the default four. A name whose DNS does
 * not answer holds its thread for the resolver's whole timeout (10 s with
 * glibc's defaults). A burst of callbacks to one such host (each new
 * connection looks its host up) took both threads, and every other lookup
 * of the process waited behind them: other tenants' callback hosts, and the
 * summarizer's host whenever the SDK opened a connection, so one tenant's
 * broken DNS held up everyone's compactions (test/webhooks/hungResolver.test.ts).
 * Shared, such a name holds one thread however many callbacks ask for it.
 */
export const systemResolveHost: ResolveHost = (hostname) => {
  let pending = lookingUp.get(hostname);
  if (pending === undefined) {
    pending = lookup(hostname, { all: true, order: "verbatim" })
      .then((found) => found.map(({ address, family }): ResolvedAddress => ({ address, family: family === 6 ? 6 : 4 })))
      .finally(() => lookingUp.delete(hostname));
    lookingUp.set(hostname, pending);
  }
  return pending;
};
