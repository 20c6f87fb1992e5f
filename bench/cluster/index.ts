/**
 * The Redis Cluster benchmark (`npm run bench:cluster`): how compaction jobs
 * per second grow with queue shards when Redis carries all the work, and how
 * long a failover keeps compactd from accepting jobs.
 *
 * Throughput: a processor that does no compaction, so nothing but the Redis
 * work of a job and the client's own CPU limits it: the API's submit (the
 * payload key written, then BullMQ's add), BullMQ's fetch, lock and complete,
 * and the worker's read of the payload and the delete that settling does. One
 * process adds jobs (conversation-sharded ids) and consumes them with one
 * worker per shard, against three masters without replicas; the shards' hash
 * tags are chosen to land on three different masters, as many shards spread
 * over a big cluster would. Rounds alternate 1 and 3 shards; medians and the
 * same-round ratio are reported, with each process's CPU per job so the
 * figures carry over to machines where Redis has a core per master.
 *
 * Failover: three masters with a replica each, jobs added steadily through
 * the API's connection settings while the master of the queue's slot is
 * SIGKILLed; how long until its replica is promoted, until a submission
 * creates its job again, and whether any accepted job is missing afterwards
 * (not completed, or completed without its payload to read).
 */
import { loadavg } from "node:os";
import { performance } from "node:perf_hooks";
import { Worker, type Job } from "bullmq";
import { expect, test } from "vitest";
import { newJobSeed, jobIdInShard, shardFor, type CompactionJobData, type CompactionSubmission } from "../../src/queue/compactionJob.js";
import { createCompactionQueues, type CompactionQueue } from "../../src/queue/compactionQueue.js";
import { PayloadStore, submitWithPayload } from "../../src/queue/payloadStore.js";
import { COMPACTION_QUEUE, serviceKeys, shardPrefix } from "../../src/queue/queueNames.js";
import { closeRedisConnection, createRedisConnection, type RedisClient } from "../../src/queue/redisConnection.js";
import { startLocalRedisCluster, type LocalRedisCluster } from "../../test/helpers/localRedisCluster.js";
import { waitUntil } from "../../test/helpers/waitUntil.js";
import { writeGeneratedSection } from "../docSection.js";
import { machine, machineLines } from "../report.js";
import { cpuSeconds } from "../service/procStats.js";
import { newSubmission, submissionFor } from "../service/queuedJobs.js";
import { corpusWorkloads } from "../service/workload.js";
import { median } from "../timing.js";

const COMMAND = "npm run bench:cluster";
const SHARD_COUNTS = [1, 3] as const;
const ROUNDS = 3;
const JOBS = 4_000;
const WARMUP_JOBS = 500;
const PARALLEL_ADDS = 64;
const CONCURRENCY_PER_SHARD = 100;
const FAILOVER_ROUNDS = 3;

interface ThroughputRun {
  readonly shards: number;
  readonly rate: number;
  /** Redis CPU (all masters) per job, µs. */
  readonly redisUsPerJob: number;
  /** The busiest master's share of the Redis CPU. */
  readonly busiestShare: number;
  /** The bench process's CPU per job, µs. */
  readonly clientUsPerJob: number;
}

interface FailoverRun {
  readonly promotedS: number;
  readonly acceptingS: number;
  readonly accepted: number;
  readonly lost: number;
}

const progress = (line: string): void => void process.stderr.write(`bench:cluster ${line}\n`);

/** A hash tag whose first `shards` shards are each served by a different master. */
async function spreadPrefix(cluster: LocalRedisCluster, shards: number): Promise<string> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const prefix = `{bench-${attempt}}`;
    const owners = new Set<number>();
    for (let shard = 0; shard < shards; shard++) {
      const tag = /\{([^}]+)\}/.exec(shardPrefix(prefix, shard))![1]!;
      owners.add((await cluster.masterOf(await cluster.slotOf(tag))).port);
    }
    if (owners.size === shards) return prefix;
  }
  throw new Error("no prefix spreads its shards over the masters");
}

/**
 * What a worker's processor and settling do to Redis for a job, and nothing
 * else: read its payload (as the worker does before compacting) and delete
 * it (as settling does). A payload that is not there fails the job, as
 * `payload_missing` does in the service, so it is never counted as completed.
 */
function noCompaction(payloads: PayloadStore): (job: Job<CompactionJobData>) => Promise<void> {
  return async (job) => {
    const id = job.id!;
    if ((await payloads.read(id, job.data)) === undefined) throw new Error(`job ${id}: its payload is not in Redis`);
    await payloads.delete(id, job.data.submissionId);
  };
}

/**
 * Submits `submission` under `jobId` as the API does (its payload key, then
 * the job), as a new request with a submission id of its own so each job has
 * its own payload key; true only when the job was created, so a payload whose
 * add failed or created nothing is not an accepted job.
 */
async function submit(queue: CompactionQueue, payloads: PayloadStore, jobId: string, submission: CompactionSubmission): Promise<boolean> {
  const outcome = await submitWithPayload(queue, payloads, jobId, newSubmission(submission), false);
  return outcome.kind === "created";
}

/** The payload stores of a producer and a consumer connection, over the service's key names for `prefix`. */
function payloadStores(prefix: string, producer: RedisClient, consumer: RedisClient): { submitted: PayloadStore; consumed: PayloadStore } {
  const keys = serviceKeys(prefix);
  return { submitted: new PayloadStore(producer, keys), consumed: new PayloadStore(consumer, keys) };
}

async function measureThroughput(cluster: LocalRedisCluster, prefix: string, shards: number, submission: CompactionSubmission, jobs: number): Promise<ThroughputRun> {
  const nodes = cluster.nodes.map((node) => node.url);
  const producer = createRedisConnection(nodes, "api", prefix);
  const consumer = createRedisConnection(nodes, "worker", prefix);
  const queues = createCompactionQueues(producer, shards, { prefix, attempts: 1, backoffMs: 1_000, retentionSeconds: 600 });
  const payloads = payloadStores(prefix, producer, consumer);
  let completed = 0;
  let resolveDone: () => void = () => {};
  let rejectDone: (error: Error) => void = () => {};
  const done = new Promise<void>((resolve, reject) => {
    resolveDone = resolve;
    rejectDone = reject;
  });
  const workers = queues.shards.map(
    (_queue, shard) =>
      new Worker<CompactionJobData>(COMPACTION_QUEUE, noCompaction(payloads.consumed), {
        connection: consumer,
        prefix: shardPrefix(prefix, shard),
        concurrency: CONCURRENCY_PER_SHARD,
      }),
  );
  for (const worker of workers) {
    worker.on("completed", () => {
      if (++completed === jobs) resolveDone();
    });
    worker.on("failed", (_job, error) => rejectDone(error));
  }
  try {
    await Promise.all(workers.map((worker) => worker.waitUntilReady()));
    const redisBefore = cluster.nodes.map((node) => cpuSeconds(node.process.pid!));
    const clientBefore = process.cpuUsage();
    const started = performance.now();
    let next = 0;
    const lane = async (): Promise<void> => {
      while (next < jobs) {
        const conversationId = `c-${next++}`;
        const id = jobIdInShard(newJobSeed(), shardFor("bench", conversationId, "", shards));
        const created = await submit(queues.of(id), payloads.submitted, id, { ...submission, data: { ...submission.data, conversationId } });
        if (!created) throw new Error(`job ${id} (${conversationId}) was not created`);
      }
    };
    // Awaited together, so a job failing while the lanes still submit fails the run at once.
    await Promise.all([...Array.from({ length: PARALLEL_ADDS }, lane), done]);
    const seconds = (performance.now() - started) / 1000;
    const client = process.cpuUsage(clientBefore);
    const redis = cluster.nodes.map((node, i) => cpuSeconds(node.process.pid!) - redisBefore[i]!);
    const redisTotal = redis.reduce((sum, s) => sum + s, 0);
    return {
      shards,
      rate: jobs / seconds,
      redisUsPerJob: (redisTotal / jobs) * 1e6,
      busiestShare: Math.max(...redis) / redisTotal,
      clientUsPerJob: (client.user + client.system) / jobs,
    };
  } finally {
    await Promise.all(workers.map((worker) => worker.close()));
    await queues.close();
    await Promise.all([producer, consumer].map(closeRedisConnection));
  }
}

async function measureFailover(submission: CompactionSubmission): Promise<FailoverRun> {
  const cluster = await startLocalRedisCluster({ replicas: 1 });
  const nodes = cluster.nodes.map((node) => node.url);
  const prefix = "{bench-failover}";
  const producer = createRedisConnection(nodes, "api", prefix);
  const consumer = createRedisConnection(nodes, "worker", prefix);
  for (const connection of [producer, consumer]) connection.on("error", () => {});
  const queues = createCompactionQueues(producer, 1, { prefix, attempts: 1, backoffMs: 1_000, retentionSeconds: 600 });
  const queue = queues.shards[0]!;
  queue.on("error", () => {});
  const payloads = payloadStores(prefix, producer, consumer);
  const completed = new Set<string>();
  const worker = new Worker<CompactionJobData>(COMPACTION_QUEUE, noCompaction(payloads.consumed), { connection: consumer, prefix, concurrency: 50 });
  worker.on("error", () => {});
  worker.on("completed", (job) => void completed.add(job.id!));
  try {
    const slot = await cluster.slotOf("bench-failover");
    const owner = await cluster.masterOf(slot);
    const accepted: string[] = [];
    let adding = true;
    let killedAt = Number.POSITIVE_INFINITY;
    let acceptingAt = 0;
    const adder = (async () => {
      while (adding) {
        const id = jobIdInShard(newJobSeed(), 0);
        const sentAt = performance.now();
        const ok = await submit(queue, payloads.submitted, id, submission).catch(() => false);
        if (ok) {
          accepted.push(id);
          // Only a submission sent after the kill says jobs are accepted again:
          // one sent before it can still be answered by the old master just after.
          if (sentAt > killedAt && acceptingAt === 0) acceptingAt = performance.now();
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    await waitUntil(() => completed.size >= 50, "jobs flow before the kill", 30_000);
    killedAt = performance.now();
    cluster.kill(owner);
    let promotedAt = 0;
    await waitUntil(
      async () => {
        if (promotedAt === 0 && (await cluster.masterOf(slot).then((node) => node.port !== owner.port, () => false))) promotedAt = performance.now();
        return promotedAt !== 0 && acceptingAt !== 0;
      },
      "a replica is promoted and jobs are accepted again",
      60_000,
    );
    const afterwards = accepted.length + 50;
    await waitUntil(() => accepted.length >= afterwards, "jobs are accepted after the failover", 30_000);
    adding = false;
    await adder;
    await waitUntil(() => accepted.every((id) => completed.has(id)), "every accepted job completes", 30_000).catch(() => undefined);
    return {
      promotedS: (promotedAt - killedAt) / 1000,
      acceptingS: (acceptingAt - killedAt) / 1000,
      accepted: accepted.length,
      lost: accepted.filter((id) => !completed.has(id)).length,
    };
  } finally {
    await worker.close();
    await queues.close();
    await Promise.all([producer, consumer].map(closeRedisConnection));
    await cluster.stop();
  }
}

function markdown(
  runs: readonly ThroughputRun[],
  failovers: readonly FailoverRun[],
  context: { load: [number, number]; seconds: number; jobBytes: number; payloadBytes: number },
): string {
  const of = (shards: number) => runs.filter((run) => run.shards === shards);
  const rounds = Array.from({ length: ROUNDS }, (_, round) => of(3)[round]!.rate / of(1)[round]!.rate);
  const f1 = (n: number) => n.toFixed(1);
  const int = (n: number) => Math.round(n).toLocaleString("en-US");
  const rows = SHARD_COUNTS.map((shards) => {
    const r = of(shards);
    return `| ${shards} | **${int(median(r.map((x) => x.rate)))}** (${r.map((x) => int(x.rate)).join(" / ")}) | ${int(median(r.map((x) => x.redisUsPerJob)))} | ${int(median(r.map((x) => x.busiestShare * 100)))}% | ${int(median(r.map((x) => x.clientUsPerJob)))} |`;
  });
  const failoverRows = failovers.map(
    (f, i) => `| ${i + 1} | ${f1(f.promotedS)} s | ${f1(f.acceptingS)} s | ${f1(f.acceptingS - f.promotedS)} s | ${f.accepted} | ${f.lost} |`,
  );
  return `${machineLines(machine(), COMMAND)}
- Redis: \`redis-server\` 7 processes on the same machine, started by the bench (\`--cluster-enabled yes\`, \`appendonly yes\`, \`cluster-node-timeout\` 2 s); load average ${context.load[0].toFixed(1)} at the start, ${context.load[1].toFixed(1)} at the end; ${Math.round(context.seconds)} s.

**Jobs per second against queue shards.** Three masters, no replicas; ${int(JOBS)} jobs per run (after ${WARMUP_JOBS} unmeasured), each what the API stores for a ~100 KB corpus conversation: its payload key (${int(context.payloadBytes)} bytes, SET before the add) and the job data (${int(context.jobBytes)} bytes of JSON), submitted by the API's \`submitWithPayload\`, a conversation id each so the API's sharding spreads them; ${PARALLEL_ADDS} submissions in flight; one worker per shard (concurrency ${CONCURRENCY_PER_SHARD}) whose processor compacts nothing but reads the payload (GET) and deletes it (UNLINK, as settling does); producer and workers in the bench process. ${ROUNDS} rounds alternating 1 and 3 shards; median (each round's rate in brackets).

| shards | jobs/s | Redis CPU per job, µs (all masters) | busiest master's share of Redis CPU | bench process CPU per job, µs |
| --- | --- | --- | --- | --- |
${rows.join("\n")}

3 shards against 1, same round: ${rounds.map((ratio) => `${ratio.toFixed(2)}×`).join(", ")} (median ${median(rounds).toFixed(2)}×; goal ≥ 2.5×).

**Failover.** Three masters with a replica each; one job submitted every 20 ms (payload key, then job) with the API's connection settings, counted as accepted only when its job was created; the same worker consuming (payload read and deleted); the master of the queue's slot SIGKILLed; an accepted job is lost if it never completes with its payload read.

| round | kill → replica promoted | kill → jobs accepted again | promoted → accepted | jobs accepted | accepted jobs lost |
| --- | --- | --- | --- | --- | --- |
${failoverRows.join("\n")}`;
}

test("cluster benchmark", async () => {
  const started = performance.now();
  const loadAtStart = loadavg()[0]!;
  const submission = await submissionFor(corpusWorkloads(1)[0]!);
  const runs: ThroughputRun[] = [];
  const cluster = await startLocalRedisCluster({ replicas: 0 });
  try {
    const prefix = await spreadPrefix(cluster, 3);
    progress(`warm-up (${prefix})`);
    await measureThroughput(cluster, shardPrefix(prefix, 10), 3, submission, WARMUP_JOBS);
    for (let round = 0; round < ROUNDS; round++) {
      for (const shards of SHARD_COUNTS) {
        const run = await measureThroughput(cluster, prefix, shards, submission, JOBS);
        progress(`round ${round + 1}, ${shards} shard(s): ${Math.round(run.rate)} jobs/s`);
        runs.push(run);
      }
    }
  } finally {
    await cluster.stop();
  }
  const failovers: FailoverRun[] = [];
  for (let round = 0; round < FAILOVER_ROUNDS; round++) {
    const run = await measureFailover(submission);
    progress(`failover ${round + 1}: promoted after ${run.promotedS.toFixed(1)} s, accepting after ${run.acceptingS.toFixed(1)} s, ${run.lost} lost`);
    failovers.push(run);
  }
  const section = markdown(runs, failovers, {
    load: [loadAtStart, loadavg()[0]!],
    seconds: (performance.now() - started) / 1000,
    jobBytes: Buffer.byteLength(JSON.stringify(submission.data)),
    payloadBytes: submission.payload.byteLength,
  });
  writeGeneratedSection("docs/BENCHMARKS.md", "cluster", "Redis Cluster", section);
  expect(runs).toHaveLength(ROUNDS * SHARD_COUNTS.length);
});
