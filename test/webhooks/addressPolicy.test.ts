import { describe, expect, it } from "vitest";
import { refusalOf } from "../../src/webhooks/addressPolicy.js";

describe("refusalOf", () => {
  it.each([
    ["127.0.0.1", "a loopback address"],
    ["127.255.0.9", "a loopback address"],
    ["::1", "a loopback address"],
    ["10.1.2.3", "a private address"],
    ["172.16.0.1", "a private address"],
    ["172.31.255.255", "a private address"],
    ["192.168.1.1", "a private address"],
    ["fd12:3456::1", "a private address"],
    ["100.64.0.1", "a carrier-grade NAT address"],
    ["100.127.255.254", "a carrier-grade NAT address"],
    ["169.254.169.254", "a cloud metadata address"],
    ["fd00:ec2::254", "a cloud metadata address"],
    ["169.254.1.1", "a link-local address"],
    ["fe80::1", "a link-local address"],
    ["224.0.0.1", "a multicast address"],
    ["ff02::1", "a multicast address"],
    ["0.0.0.0", "an unspecified address"],
    ["::", "an unspecified address"],
    ["255.255.255.255", "a reserved address"],
    ["::ffff:127.0.0.1", "an IPv6 address embedding an IPv4 address"],
    ["::ffff:7f00:1", "an IPv6 address embedding an IPv4 address"],
    ["::ffff:8.8.8.8", "an IPv6 address embedding an IPv4 address"],
    ["64:ff9b::a00:1", "an IPv6 address embedding an IPv4 address"],
    ["2002:7f00:1::", "an IPv6 address embedding an IPv4 address"],
  ])("refuses %s as %s", (address, reason) => {
    expect(refusalOf(address)).toBe(reason);
  });

  it.each(["8.8.8.8", "1.1.1.1", "172.32.0.1", "100.128.0.1", "2606:4700:4700::1111", "2a00:1450:4001:80b::200e"])(
    "lets the public address %s through",
    (address) => {
      expect(refusalOf(address)).toBeNull();
    },
  );

  it("refuses what is not an IP address at all", () => {
    expect(refusalOf("example.com")).toBe("not an IP address");
    expect(refusalOf("")).toBe("not an IP address");
  });
});
