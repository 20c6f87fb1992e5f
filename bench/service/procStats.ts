/**
 * CPU time and resident memory of processes, read from /proc, so one run can
 * say where the CPU of a job went (load generator, API, worker, Redis) and
 * how much memory a worker holds, without instrumenting the processes.
 */
import { readFileSync } from "node:fs";

/** Clock ticks per second of utime/stime in /proc/<pid>/stat; 100 on every Linux build Node runs on. */
const CLOCK_TICKS = 100;

/** User + system CPU seconds a process has used so far (all its threads). */
export function cpuSeconds(pid: number): number {
  return statCpuSeconds(`/proc/${pid}/stat`);
}

/**
 * The same for the process's main thread only: the JavaScript event loop,
 * which one core bounds, apart from the threads beside it (libuv's pool
 * running zlib, V8's collector helpers).
 */
export function mainThreadCpuSeconds(pid: number): number {
  return statCpuSeconds(`/proc/${pid}/task/${pid}/stat`);
}

function statCpuSeconds(file: string): number {
  const stat = readFileSync(file, "utf8");
  // The command name (field 2) may contain spaces; the fields after it are plain numbers.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // utime and stime are fields 14 and 15 of the whole line, 12 and 13 after the name.
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

/** Resident set size in bytes (VmRSS of /proc/<pid>/status). */
export function rssBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kib = /^VmRSS:\s+(\d+)\s+kB$/m.exec(status)?.[1];
  if (kib === undefined) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(kib) * 1024;
}

/** CPU seconds of a set of named processes, taken at one moment. */
export type CpuSnapshot = Readonly<Record<string, number>>;

export function cpuSnapshot(pids: Readonly<Record<string, number>>): CpuSnapshot {
  return Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, cpuSeconds(pid)]));
}

/** CPU seconds each process spent between two snapshots. */
export function cpuSpent(before: CpuSnapshot, after: CpuSnapshot): CpuSnapshot {
  return Object.fromEntries(Object.keys(before).map((name) => [name, (after[name] ?? 0) - before[name]!]));
}

/**
 * CPU seconds the whole machine has been busy (every core, every process),
 * from the first line of /proc/stat: what is left after subtracting the
 * bench's own processes is other work sharing the cores during a measurement.
 */
export function machineBusySeconds(): number {
  const fields = readFileSync("/proc/stat", "utf8").split("\n", 1)[0]!.trim().split(/\s+/).slice(1).map(Number);
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = fields;
  return (user + nice + system + irq + softirq + steal) / CLOCK_TICKS;
}
