import { afterAll, beforeAll } from "vitest";
import { runApi, type RunningApi } from "../../src/api/runApi.js";
import { deleteKeysUnder } from "./redisTestPrefix.js";
import { serviceConfig } from "./serviceConfig.js";

/**
 * An API on 127.0.0.1 that one test file shares: started before the file's
 * first test, closed after its last, and the Redis keys it wrote deleted.
 * `port` is known only once it has started, so read it inside tests.
 */
export function apiForFile(name: string, env: Record<string, string> = {}): { readonly port: number } {
  const config = serviceConfig(name, env);
  let api: RunningApi | undefined;
  beforeAll(async () => {
    api = await runApi(config, { logger: false }, "127.0.0.1");
  });
  afterAll(async () => {
    await api?.close();
    await deleteKeysUnder(config.queuePrefix);
  });
  return {
    get port() {
      if (api === undefined) throw new Error("the API is started before the file's tests, not while they are collected");
      return api.port;
    },
  };
}
