import { describe, expect, it } from "vitest";
import { parseUrl } from "../../src/http/parseUrl.js";
import { parseCallbackAllow } from "../../src/webhooks/callbackAllow.js";
import { parseCallbackUrl } from "../../src/webhooks/callbackUrl.js";

/** Enough calls for V8 to optimize a call site, where Node 20's URL.canParse takes its fast path. */
const HOT = 100_000;

describe("parseUrl", () => {
  it("reads hosts with Latin-1 letters as well after many calls as before, where URL.canParse's fast path refuses them", () => {
    const international = ["http://bücher.example/", "https://é.example", "http://ß"];
    const before = international.map((url) => parseUrl(url)?.hostname);
    for (let i = 0; i < HOT; i++) parseUrl(`http://example.com/${i % 10}`);
    expect(international.map((url) => parseUrl(url)?.hostname)).toEqual(before);
    expect(before).toEqual(["xn--bcher-kva.example", "xn--9ca.example", "xn--zca"]);
  });

  it("refuses what the WHATWG parser refuses, against a base when given one", () => {
    expect([parseUrl("http://["), parseUrl("not a url"), parseUrl("//[", "http://metrics")]).toEqual([undefined, undefined, undefined]);
    expect(parseUrl("/metrics?x=1", "http://metrics")?.pathname).toBe("/metrics");
  });
});

describe("parseCallbackUrl on a busy API", () => {
  it("takes an international callback host after thousands of callback URLs", () => {
    const allow = parseCallbackAllow([]);
    for (let i = 0; i < HOT; i++) parseCallbackUrl(`https://hooks.example.com/${i % 10}`, allow);
    expect(parseCallbackUrl("https://bücher.example/hook", allow).hostname).toBe("xn--bcher-kva.example");
  });
});
