/**
 * Runs a command in a network namespace of its own, where only a fresh
 * loopback exists: the machine's Redis on 127.0.0.1:6379 is out of reach, as
 * on a newcomer's machine with no Redis running. Needs root (CI runs as root);
 * elsewhere the tests that use it are skipped.
 */
import { spawnSync } from "node:child_process";

export const canIsolateNetwork: boolean =
  process.getuid?.() === 0 && spawnSync("unshare", ["-n", "true"], { stdio: "ignore" }).status === 0;

/** `argv` wrapped to run in a new network namespace with loopback up. */
export function inIsolatedNetwork(argv: readonly string[]): [string, ...string[]] {
  return ["unshare", "-n", "sh", "-c", 'ip link set lo up && exec "$@"', "sh", ...argv];
}
