/**
 * The service benchmark of issue 3 (`npm run bench:service`): what the
 * service adds to a compaction, how many slow compactions a worker keeps in
 * flight, and what a queued job costs Redis, each figure next to its anchor
 * from the same run.
 *
 * Everything runs on loopback against the Redis at 127.0.0.1:6379, each
 * scenario under a queue prefix of its own that is deleted afterwards. Counts
 * are fixed so the whole run stays within a few minutes on two cores. It runs
 * under vitest only because vitest resolves the TypeScript sources and test
 * helpers in place; it asserts nothing about speed. The markdown goes to
 * stdout and into the Service section of docs/BENCHMARKS.md.
 */
import { execFileSync } from "node:child_process";
import { loadavg } from "node:os";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { test } from "vitest";
import { closeRedisConnection, createRedisConnection } from "../../src/queue/redisConnection.js";
import { TEST_REDIS_URL } from "../../test/helpers/redisTestPrefix.js";
import { machine } from "../report.js";
import { measureConcurrency, ONE_WORKER } from "./concurrency.js";
import { measureJobSteps } from "./jobSteps.js";
import { measureOverhead, OVERHEAD_PLAN } from "./overhead.js";
import { measureQueueCeiling } from "./queueCeiling.js";
import { submissionFor } from "./queuedJobs.js";
import { measureRedisBytes } from "./redisBytes.js";
import { writeGeneratedSection } from "../docSection.js";
import { serviceMarkdown } from "./report.js";
import { corpusWorkloads, SCENARIO_CONVERSATIONS, SMALL_STRETCHES } from "./workload.js";

const COMMAND = "npm run bench:service";
const DOC = fileURLToPath(new URL("../../docs/BENCHMARKS.md", import.meta.url));
const REPO = fileURLToPath(new URL("../..", import.meta.url));

const REDIS_JOBS = 64;
/** Each conversation's steps are timed this many times (after one pass to warm up). */
const STEP_REPETITIONS = 8;
const CEILING = { jobs: 3_000, parallelAdds: 64, workerConcurrency: 50 } as const;
const TWO_WORKERS = { ...ONE_WORKER, workers: 2 } as const;

const started = performance.now();

function progress(line: string): void {
  process.stderr.write(`bench:service ${((performance.now() - started) / 1000).toFixed(0).padStart(4)}s ${line}\n`);
}

function commit(): string {
  const git = (...args: string[]) => execFileSync("git", args, { cwd: REPO, encoding: "utf8" }).trim();
  const head = git("rev-parse", "--short", "HEAD");
  // The service processes run the build of the working tree, so say when it is not the commit.
  const dirty = git("status", "--porcelain", "--", "src").length > 0;
  return dirty ? `${head} with uncommitted changes in src/` : head;
}

test("service benchmark", async () => {
  const loadAtStart = loadavg()[0]!;
  const workloads = corpusWorkloads(SCENARIO_CONVERSATIONS);
  const redis = createRedisConnection(TEST_REDIS_URL, "worker", "bench-service");
  try {
    const redisVersion = /redis_version:(\S+)/.exec(await redis.info("server"))?.[1] ?? "unknown";

    progress(`job steps: ${SCENARIO_CONVERSATIONS} conversations × ${STEP_REPETITIONS}`);
    const steps = await measureJobSteps(workloads, STEP_REPETITIONS);

    progress(`redis bytes: ${REDIS_JOBS} queued jobs`);
    const redisBytes = await measureRedisBytes(workloads, REDIS_JOBS, redis);

    progress(`queue ceiling: ${CEILING.jobs} no-op jobs`);
    const ceiling = await measureQueueCeiling(await submissionFor(workloads[0]!), CEILING);

    const overhead = await measureOverhead(workloads, corpusWorkloads(SCENARIO_CONVERSATIONS, SMALL_STRETCHES), OVERHEAD_PLAN, redis, progress);
    const one = await measureConcurrency(workloads, ONE_WORKER, redis, progress);
    const two = await measureConcurrency(workloads, TWO_WORKERS, redis, progress);

    const markdown = serviceMarkdown({
      context: {
        machine: machine(),
        redisVersion,
        command: COMMAND,
        commit: commit(),
        load: [loadAtStart, loadavg()[0]!],
        seconds: (performance.now() - started) / 1000,
      },
      workloads,
      overhead,
      steps,
      ceiling,
      one,
      two,
      redis: redisBytes,
    });
    process.stdout.write(`\n${markdown}\n`);
    writeGeneratedSection(DOC, "service", "Service", markdown);
    progress("done");
  } finally {
    await closeRedisConnection(redis);
  }
});
