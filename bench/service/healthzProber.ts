/**
 * `/healthz` probed from a process of its own, as the kubelet probes it.
 *
 * A probe in the bench process times the bench's own event loop as much as
 * the API: while it sends fifty 20 MiB bodies, the probe's answer waits its
 * turn there. In one run the in-process probe reported a slowest answer of
 * 3.7 s while `curl`, probing the same API from outside in the same run, saw
 * at most 0.55 s.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";

/** The child: probes every `interval` ms until its stdin ends, then prints its slowest answer in ms. */
const PROBER = `
const [port, interval, timeout] = process.argv.slice(1).map(Number);
let slowest = 0;
let probing = true;
let started = false;
process.stdin.resume();
process.stdin.on("end", () => { probing = false; });
while (probing) {
  const begun = performance.now();
  await fetch("http://127.0.0.1:" + port + "/healthz", { signal: AbortSignal.timeout(timeout) }).catch(() => undefined);
  slowest = Math.max(slowest, performance.now() - begun);
  if (!started) { started = true; process.stdout.write("probing\\n"); }
  await new Promise((resolve) => setTimeout(resolve, interval));
}
process.stdout.write(slowest.toFixed(0) + "\\n");
`;

export interface HealthzProber {
  /** Stops probing; resolves with the slowest answer, in ms. */
  stop(): Promise<number>;
}

/** Starts probing `port` every `intervalMs`; resolves once the first probe has been answered. */
export async function startHealthzProber(port: number, intervalMs: number, timeoutMs: number): Promise<HealthzProber> {
  const child = spawn(process.execPath, ["--input-type=module", "-e", PROBER, String(port), String(intervalMs), String(timeoutMs)], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  let output = "";
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (chunk: string) => (output += chunk));
  while (!output.includes("probing\n")) {
    if (child.exitCode !== null) throw new Error(`the /healthz prober exited with ${child.exitCode}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return {
    async stop() {
      const exited = once(child, "exit");
      child.stdin.end();
      await exited;
      const slowest = Number(output.trim().split("\n").pop());
      if (!Number.isFinite(slowest)) throw new Error(`the /healthz prober printed ${JSON.stringify(output)}`);
      return slowest;
    },
  };
}
