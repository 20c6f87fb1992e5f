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

export const systemResolveHost: ResolveHost = async (hostname) =>
  (await lookup(hostname, { all: true, order: "verbatim" })).map(({ address, family }) => ({
    address,
    family: family === 6 ? 6 : 4,
  }));
