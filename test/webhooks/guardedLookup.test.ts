import type { LookupAddress } from "node:dns";
import { describe, expect, it } from "vitest";
import { parseCallbackAllow } from "../../src/webhooks/callbackAllow.js";
import { CallbackRefusedError, guardedLookup } from "../../src/webhooks/guardedLookup.js";
import type { ResolveHost } from "../../src/webhooks/resolveHost.js";

const resolve: ResolveHost = async (hostname) =>
  ({
    "public.test": [
      { address: "93.184.216.34", family: 4 as const },
      { address: "2606:2800:220:1::1", family: 6 as const },
    ],
    "mixed.test": [
      { address: "93.184.216.34", family: 4 as const },
      { address: "::1", family: 6 as const },
    ],
    "empty.test": [],
  })[hostname] ?? [];

function lookUp(hostname: string, options: { all?: boolean; family?: number }, allow: string[] = []) {
  return new Promise<{ error: NodeJS.ErrnoException | null; address: string | LookupAddress[]; family?: number }>((done) => {
    guardedLookup(parseCallbackAllow(allow), resolve)(hostname, options, (error, address, family) =>
      done({ error, address, ...(family === undefined ? {} : { family }) }),
    );
  });
}

describe("guardedLookup", () => {
  it("hands every address to a socket that asks for all of them (happy eyeballs)", async () => {
    const { error, address } = await lookUp("public.test", { all: true });
    expect(error).toBeNull();
    expect(address).toEqual([
      { address: "93.184.216.34", family: 4 },
      { address: "2606:2800:220:1::1", family: 6 },
    ]);
  });

  it("answers a single-address lookup in the requested family", async () => {
    expect(await lookUp("public.test", { family: 6 })).toEqual({ error: null, address: "2606:2800:220:1::1", family: 6 });
    expect(await lookUp("public.test", {})).toEqual({ error: null, address: "93.184.216.34", family: 4 });
  });

  it("refuses the whole name when one of its addresses is refused", async () => {
    const { error } = await lookUp("mixed.test", { all: true });
    expect(error).toBeInstanceOf(CallbackRefusedError);
    expect(error?.message).toBe("mixed.test resolves to ::1, a loopback address");
  });

  it("lets an allowed address through", async () => {
    expect((await lookUp("mixed.test", { all: true }, ["::1"])).error).toBeNull();
  });

  it("reports a name without addresses as not found", async () => {
    expect((await lookUp("empty.test", {})).error?.code).toBe("ENOTFOUND");
  });
});
