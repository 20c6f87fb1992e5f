import { BlockList, isIP } from "node:net";

/**
 * Which network addresses a callback may never reach unless the operator
 * allows them: everything that is not a public unicast address.
 *
 * A callback URL comes from a tenant, and the service POSTs to it from inside
 * the cluster. Without this rule any tenant can make compactd talk to Redis,
 * the cloud metadata endpoint (credentials) or an admin port on localhost.
 */

interface RefusedRange {
  readonly reason: string;
  readonly family: 4 | 6;
  readonly cidrs: readonly string[];
}

const REFUSED_RANGES: readonly RefusedRange[] = [
  { reason: "a cloud metadata address", family: 4, cidrs: ["169.254.169.254/32"] },
  { reason: "a cloud metadata address", family: 6, cidrs: ["fd00:ec2::254/128"] },
  { reason: "an unspecified address", family: 4, cidrs: ["0.0.0.0/8"] },
  { reason: "an unspecified address", family: 6, cidrs: ["::/128"] },
  { reason: "a loopback address", family: 4, cidrs: ["127.0.0.0/8"] },
  { reason: "a loopback address", family: 6, cidrs: ["::1/128"] },
  { reason: "a private address", family: 4, cidrs: ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"] },
  { reason: "a private address", family: 6, cidrs: ["fc00::/7", "fec0::/10"] },
  { reason: "a carrier-grade NAT address", family: 4, cidrs: ["100.64.0.0/10"] },
  { reason: "a link-local address", family: 4, cidrs: ["169.254.0.0/16"] },
  { reason: "a link-local address", family: 6, cidrs: ["fe80::/10"] },
  { reason: "a multicast address", family: 4, cidrs: ["224.0.0.0/4"] },
  { reason: "a multicast address", family: 6, cidrs: ["ff00::/8"] },
  {
    // Protocol assignments, documentation, benchmarking, the old class E and
    // broadcast: none is a real receiver, and some networks route them inside.
    reason: "a reserved address",
    family: 4,
    cidrs: ["192.0.0.0/24", "192.0.2.0/24", "198.18.0.0/15", "198.51.100.0/24", "203.0.113.0/24", "240.0.0.0/4"],
  },
  { reason: "a reserved address", family: 6, cidrs: ["100::/64", "2001:db8::/32"] },
  {
    // These IPv6 forms carry an IPv4 address the network may translate to
    // (NAT64, 6to4, Teredo, IPv4-compatible): judging the IPv6 form alone would
    // let `::ffff:127.0.0.1` reach localhost.
    reason: "an IPv6 address embedding an IPv4 address",
    family: 6,
    cidrs: ["::ffff:0:0/96", "::/96", "64:ff9b::/96", "64:ff9b:1::/48", "2002::/16", "2001::/32"],
  },
];

interface CompiledRange {
  readonly reason: string;
  readonly family: 4 | 6;
  readonly list: BlockList;
}

const COMPILED: readonly CompiledRange[] = REFUSED_RANGES.map(({ reason, family, cidrs }) => {
  const list = new BlockList();
  for (const cidr of cidrs) {
    const [network = "", prefix = ""] = cidr.split("/");
    list.addSubnet(network, Number(prefix), family === 4 ? "ipv4" : "ipv6");
  }
  return { reason, family, list };
});

/**
 * Why `address` (an IP literal) may not receive callbacks, or `null` when it is
 * a public unicast address. Anything that is not a parseable IP is refused:
 * the caller resolves names first.
 *
 * Only ranges of the address's own family are consulted, because node's
 * BlockList matches IPv4 rules against IPv4-mapped IPv6 and the other way
 * round, which would mislabel (not miss) addresses.
 */
export function refusalOf(address: string): string | null {
  const family = isIP(address);
  if (family !== 4 && family !== 6) return "not an IP address";
  try {
    for (const range of COMPILED) {
      if (range.family === family && range.list.check(address, family === 4 ? "ipv4" : "ipv6")) return range.reason;
    }
  } catch {
    // Zone ids (`fe80::1%eth0`) pass isIP but not BlockList: never public.
    return "not a routable IP address";
  }
  return null;
}
