/**
 * The service harness (API, workers, fake Anthropic, callback receiver on a
 * fresh Redis prefix) with the API listening on a real port, and a client for
 * it: the client is tested over HTTP, not through `app.inject`.
 */
import type { AddressInfo } from "node:net";
import { CompactdClient, type CompactdClientOptions } from "../../src/client/index.js";
import { TEST_TENANTS } from "../helpers/serviceConfig.js";
import { startServiceHarness, type HarnessOptions, type ServiceHarness } from "../helpers/serviceHarness.js";

export interface ServiceUnderTest {
  readonly harness: ServiceHarness;
  /** `http://127.0.0.1:<port>` of the API. */
  readonly url: string;
  /** A client of tenant acme; `options` override the defaults (e.g. `baseUrl` to go through a proxy). */
  client(options?: Partial<CompactdClientOptions>): CompactdClient;
  close(): Promise<void>;
}

export async function startServiceUnderTest(name: string, options: HarnessOptions = {}): Promise<ServiceUnderTest> {
  const harness = await startServiceHarness(name, options);
  await harness.app.listen({ port: 0, host: "127.0.0.1" });
  const url = `http://127.0.0.1:${(harness.app.server.address() as AddressInfo).port}`;
  return {
    harness,
    url,
    client: (overrides = {}) => new CompactdClient({ baseUrl: url, apiKey: TEST_TENANTS.acme, ...overrides }),
    close: () => harness.close(),
  };
}
