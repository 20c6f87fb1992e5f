import { BlockList, isIP } from "node:net";

/**
 * The operator's exceptions to the callback address policy
 * (`COMPACTD_CALLBACK_ALLOW`): receivers that legitimately live on a private
 * network, such as an agent in the same cluster.
 *
 * Entries are IP addresses, CIDRs (`10.1.0.0/16`), host names
 * (`hooks.internal`) or wildcard host names (`*.svc.cluster.local`, which
 * matches subdomains only). A host-name entry trusts the name whatever it
 * resolves to: the operator vouches for the name, not for an address.
 */
export interface CallbackAllow {
  allowsHost(hostname: string): boolean;
  allowsAddress(address: string): boolean;
}

const LABEL = "[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?";
const HOST_NAME = new RegExp(`^(?:\\*\\.)?${LABEL}(?:\\.${LABEL})*$`, "i");

/** Without the root dot DNS allows, which names the same host. */
function withoutRootDot(hostname: string): string {
  return hostname.replace(/\.$/, "");
}

/** Host names compare without case and without the root dot. */
function canonicalHost(hostname: string): string {
  return withoutRootDot(hostname).toLowerCase();
}

/** RFC 6874's characters of an IPv6 zone id ("%eth0"), which the chart's schema allows too. */
const ZONE_ID = /^[0-9A-Za-z._~-]+$/;

/**
 * node:net's isIP, except that an IPv6 zone id must be RFC 6874's: isIP takes
 * any text after "%" (`::%eth0::`), which names no interface and which the
 * chart's schema refuses, so the two would disagree on what starts.
 */
function ipFamily(text: string): number {
  const family = isIP(text);
  const zone = text.indexOf("%");
  return zone < 0 || ZONE_ID.test(text.slice(zone + 1)) ? family : 0;
}

function cidrParts(entry: string): { network: string; prefix: number; family: 4 | 6 } | null {
  const slash = entry.indexOf("/");
  if (slash < 0) return null;
  const network = entry.slice(0, slash);
  const prefixText = entry.slice(slash + 1);
  const family = ipFamily(network);
  if ((family !== 4 && family !== 6) || !/^\d{1,3}$/.test(prefixText)) return null;
  const prefix = Number(prefixText);
  if (prefix > (family === 4 ? 32 : 128)) return null;
  return { network, prefix, family };
}

/**
 * What is wrong with one allow-list entry, or `null` when it is valid. Config
 * validation uses it so a typo fails at start-up instead of silently allowing
 * nothing.
 */
export function allowEntryProblem(entry: string): string | null {
  if (ipFamily(entry) !== 0) return null;
  if (entry.includes("/")) {
    return cidrParts(entry) ? null : `"${entry}" is not a CIDR (an IP address, "/", a prefix length that fits it)`;
  }
  // As written, before case folding: toLowerCase turns the Kelvin sign into
  // "k", and a URL's host maps fullwidth letters and the long s to ASCII, so a
  // non-ASCII entry would name another host than it shows. Callback hosts
  // reach the list in ASCII (IDNA), so entries are written so too.
  return HOST_NAME.test(withoutRootDot(entry))
    ? null
    : `"${entry}" is neither an IP address, a CIDR nor a host name (ASCII letters, digits, "-", dots; "*." prefix for subdomains; xn-- form for international names)`;
}

/** Compiles validated entries (see {@link allowEntryProblem}); throws on an invalid one. */
export function parseCallbackAllow(entries: readonly string[]): CallbackAllow {
  const addresses = new BlockList();
  const hosts = new Set<string>();
  const suffixes: string[] = [];
  for (const entry of entries) {
    const problem = allowEntryProblem(entry);
    if (problem) throw new Error(`COMPACTD_CALLBACK_ALLOW: ${problem}`);
    const family = ipFamily(entry);
    const cidr = cidrParts(entry);
    if (family === 4 || family === 6) addresses.addAddress(entry, family === 4 ? "ipv4" : "ipv6");
    else if (cidr) addresses.addSubnet(cidr.network, cidr.prefix, cidr.family === 4 ? "ipv4" : "ipv6");
    else if (entry.startsWith("*.")) suffixes.push(canonicalHost(entry.slice(1)));
    else hosts.add(canonicalHost(entry));
  }
  return {
    allowsHost(hostname) {
      const host = canonicalHost(hostname);
      return hosts.has(host) || suffixes.some((suffix) => host.endsWith(suffix));
    },
    allowsAddress(address) {
      const family = isIP(address);
      if (family !== 4 && family !== 6) return false;
      try {
        return addresses.check(address, family === 4 ? "ipv4" : "ipv6");
      } catch {
        return false;
      }
    },
  };
}
