import { describe, expect, it } from "vitest";
import { CallbackUrlError, checkCallbackUrl } from "../../src/webhooks/callbackUrl.js";
import { allowEntryProblem, parseCallbackAllow } from "../../src/webhooks/callbackAllow.js";
import type { ResolveHost } from "../../src/webhooks/resolveHost.js";

/** A resolver from a table, standing in for DNS without the network. */
function fakeDns(table: Record<string, string[]>): ResolveHost {
  return async (hostname) => {
    const addresses = table[hostname];
    if (addresses === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });
    return addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
  };
}

const dns = fakeDns({
  "hooks.example.com": ["93.184.216.34"],
  "rebind.example.com": ["127.0.0.1"],
  "mixed.example.com": ["93.184.216.34", "10.0.0.7"],
  "metadata.example.com": ["169.254.169.254"],
  "v6.example.com": ["2606:4700:4700::1111"],
  "v6-private.example.com": ["fd00::5"],
  "internal.corp": ["10.20.30.40"],
  "a.svc.cluster.local": ["10.96.0.12"],
  "svc.cluster.local": ["10.96.0.1"],
  "xn--bcher-kva.corp": ["10.20.30.41"],
});

async function refusal(url: unknown, allow: string[] = []): Promise<CallbackUrlError> {
  const error = await checkCallbackUrl(url, parseCallbackAllow(allow), { resolveHost: dns }).then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(CallbackUrlError);
  const refused = error as CallbackUrlError;
  expect(refused.field).toBe("callbackUrl");
  expect(refused.code).toBe("invalid_callback_url");
  return refused;
}

describe("checkCallbackUrl", () => {
  it.each([
    ["http://127.0.0.1:8080/hook", "127.0.0.1 is a loopback address"],
    ["http://10.1.2.3/hook", "10.1.2.3 is a private address"],
    ["http://[::1]/hook", "::1 is a loopback address"],
    ["http://169.254.169.254/latest/meta-data/", "169.254.169.254 is a cloud metadata address"],
    ["http://[fd00:ec2::254]/", "fd00:ec2::254 is a cloud metadata address"],
    ["http://[::ffff:127.0.0.1]/", "is an IPv6 address embedding an IPv4 address"],
    ["http://100.100.100.200/", "100.100.100.200 is a carrier-grade NAT address"],
    ["http://0.0.0.0:9464/metrics", "0.0.0.0 is an unspecified address"],
    // WHATWG URL parsing normalizes these spellings of 127.0.0.1 before we look.
    ["http://0x7f.1/", "127.0.0.1 is a loopback address"],
    ["http://2130706433/", "127.0.0.1 is a loopback address"],
  ])("refuses the literal address in %s", async (url, message) => {
    expect((await refusal(url)).message).toContain(message);
  });

  it("refuses a host name that resolves to 127.0.0.1", async () => {
    expect((await refusal("https://rebind.example.com/hook")).message).toContain(
      "rebind.example.com resolves to 127.0.0.1, a loopback address",
    );
  });

  it("refuses `localhost` through the system resolver, which reads /etc/hosts and needs no network", async () => {
    const error = await checkCallbackUrl("http://localhost:3000/hook", parseCallbackAllow([])).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(CallbackUrlError);
    expect((error as Error).message).toContain("localhost resolves to 127.0.0.1, a loopback address");
  });

  it("refuses a name when any of its addresses is refused, since a connection may use any of them", async () => {
    expect((await refusal("https://mixed.example.com/")).message).toContain("10.0.0.7, a private address");
  });

  it("refuses names resolving to metadata and private IPv6 addresses", async () => {
    expect((await refusal("https://metadata.example.com/")).message).toContain("a cloud metadata address");
    expect((await refusal("https://v6-private.example.com/")).message).toContain("fd00::5, a private address");
  });

  it.each([
    ["ftp://hooks.example.com/hook", "scheme ftp: is not allowed"],
    ["file:///etc/passwd", "scheme file: is not allowed"],
    ["gopher://hooks.example.com/", "scheme gopher: is not allowed"],
    ["not a url", "is not a URL"],
    ["https://user:pw@hooks.example.com/", "must not carry credentials"],
    ["https://user@hooks.example.com/", "must not carry credentials"],
    ["http://hooks.example.com:0/hook", "port 0 cannot be connected to"],
    ["https://[2606:4700:4700::1111]:0/", "port 0 cannot be connected to"],
    [`https://hooks.example.com/${"a".repeat(2100)}`, "longer than 2048"],
    [42, "must be a string"],
    ["https://nowhere.example.com/", "host nowhere.example.com does not resolve"],
  ])("refuses %s", async (url, message) => {
    expect((await refusal(url)).message).toContain(message);
  });

  it("accepts public receivers by literal address or by name, over IPv4 and IPv6", async () => {
    for (const url of ["https://hooks.example.com/hook?x=1", "http://93.184.216.34:8080/", "https://v6.example.com/", "http://[2606:4700:4700::1111]/"]) {
      await expect(checkCallbackUrl(url, parseCallbackAllow([]), { resolveHost: dns })).resolves.toBeUndefined();
    }
  });

  it("lets the operator's allow-list through: addresses, CIDRs, host names and subdomain wildcards", async () => {
    await expect(checkCallbackUrl("http://127.0.0.1:4000/hook", parseCallbackAllow(["127.0.0.1"]), { resolveHost: dns })).resolves.toBeUndefined();
    await expect(checkCallbackUrl("http://[::1]:4000/hook", parseCallbackAllow(["::1"]), { resolveHost: dns })).resolves.toBeUndefined();
    await expect(checkCallbackUrl("http://10.9.8.7/", parseCallbackAllow(["10.0.0.0/8"]), { resolveHost: dns })).resolves.toBeUndefined();
    await expect(checkCallbackUrl("http://internal.corp/", parseCallbackAllow(["internal.corp"]), { resolveHost: dns })).resolves.toBeUndefined();
    await expect(checkCallbackUrl("http://internal.corp/", parseCallbackAllow(["10.20.30.0/24"]), { resolveHost: dns })).resolves.toBeUndefined();
    await expect(
      checkCallbackUrl("http://a.svc.cluster.local/", parseCallbackAllow(["*.svc.cluster.local"]), { resolveHost: dns }),
    ).resolves.toBeUndefined();
  });

  it("allows only what the allow-list names", async () => {
    expect((await refusal("http://127.0.0.2/", ["127.0.0.1"])).message).toContain("loopback");
    expect((await refusal("http://internal.corp/", ["192.168.0.0/16"])).message).toContain("private");
    // A wildcard covers subdomains, not the domain itself.
    expect((await refusal("http://svc.cluster.local/", ["*.svc.cluster.local"])).message).toContain("private");
    expect((await refusal("http://169.254.169.254/", ["10.0.0.0/8", "internal.corp"])).message).toContain("metadata");
  });

  it("matches an allowed international name written in its ASCII form (xn--), as callback URLs reach it", async () => {
    await expect(checkCallbackUrl("http://bücher.corp/", parseCallbackAllow(["xn--bcher-kva.corp"]), { resolveHost: dns })).resolves.toBeUndefined();
    await expect(checkCallbackUrl("http://BÜCHER.corp/", parseCallbackAllow(["*.corp"]), { resolveHost: dns })).resolves.toBeUndefined();
  });
});

describe("allowEntryProblem", () => {
  // The Kelvin sign lower-cases to k, the long s and fullwidth letters map to ASCII in a URL's host:
  // none is what a callback URL's host name is compared in, so each is refused as written.
  it.each(["\u212aube.internal", "*.\u212aube", "hooks.\u017fvc", "\uff48ooks.internal", "\u0130nternal", "bücher.corp"])(
    "refuses the non-ASCII host name %j, naming the ASCII form it wants",
    (entry) => {
      expect(allowEntryProblem(entry)).toContain("ASCII");
    },
  );

  it.each(["hooks.internal", "HOOKS.Internal.", "*.svc.cluster.local", "xn--bcher-kva.corp", "10.0.0.0/8", "fd00::/8", "fe80::1%eth0", "fe80::1%en0.1/64"])(
    "takes %j",
    (entry) => {
      expect(allowEntryProblem(entry)).toBeNull();
    },
  );

  // node:net takes any text after "%" as an IPv6 zone; RFC 6874 allows unreserved characters only, as the chart's schema does.
  it.each(["::%eth0::", "fe80::1%", "fe80::1%eth 0", "fe80::1%a/b/64", "fe80::1%\u00e9th0"])("refuses the IPv6 zone of %j", (entry) => {
    expect(allowEntryProblem(entry)).not.toBeNull();
  });
});
