/**
 * Gives the whole suite one Redis before any test file runs: REDIS_URL when
 * set, else the Redis on 127.0.0.1:6379, else a private redis-server started
 * here and stopped after the run. Test files and the processes they spawn
 * read it from REDIS_URL (see `helpers/redisTestPrefix.ts`).
 */
import { localRedis, NoRedisError } from "../src/cli/localRedis.js";

export async function setup(): Promise<() => Promise<void>> {
  let redis;
  try {
    redis = await localRedis({ env: process.env });
  } catch (err) {
    if (!(err instanceof NoRedisError)) throw err;
    process.stderr.write(`compactd tests: ${err.message}\n`);
    process.exit(1);
  }
  process.stderr.write(`compactd tests: ${redis.description}\n`);
  process.env.REDIS_URL = redis.url;
  return () => redis.stop();
}
