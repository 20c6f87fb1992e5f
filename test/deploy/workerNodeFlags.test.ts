/**
 * The worker runs with the chart's heap flags on its node command line, and
 * the service benchmark runs its worker with the same flags, so the figures
 * in docs/BENCHMARKS.md are those of the worker as deployed.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { WORKER_NODE_FLAGS } from "../../bench/service/serviceProcesses.js";
import { repoRoot } from "../helpers/repoRoot.js";
import { readValues } from "./chart.js";
import { HELM_RENDER, renderChart } from "./helmRender.js";

interface Container {
  readonly name: string;
  readonly command?: string[];
  readonly args?: string[];
}

function workerContainer(manifests: readonly Record<string, unknown>[]): Container {
  const deployment = manifests.find((m) => m.kind === "Deployment" && (m.metadata as { name: string }).name.endsWith("-worker")) as
    | { spec: { template: { spec: { containers: Container[] } } } }
    | undefined;
  const container = deployment?.spec.template.spec.containers.find((c) => c.name === "worker");
  if (container === undefined) throw new Error("no worker container rendered");
  return container;
}

describe("the worker's node flags", () => {
  const flags = (readValues() as { worker: { nodeFlags: string[] } }).worker.nodeFlags;

  it("are on the worker's node command line, before the script the image's entrypoint runs", async () => {
    expect(flags.length).toBeGreaterThan(0);
    const worker = workerContainer(await renderChart());
    expect(worker.command).toEqual(["node", ...flags, "bin/compactd.js"]);
    expect(worker.args).toEqual(["worker"]);
    expect(readFileSync(path.join(repoRoot, "Dockerfile"), "utf8")).toContain('ENTRYPOINT ["node", "bin/compactd.js"]');
  });

  it("can be emptied, leaving Node's defaults", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "compactd-values-"));
    const file = path.join(dir, "values.yaml");
    writeFileSync(file, "worker:\n  nodeFlags: []\n");
    const { stdout } = await promisify(execFile)(HELM_RENDER, [path.join(repoRoot, "helm/compactd"), "-f", file], { maxBuffer: 16 * 1024 * 1024 });
    const manifests = parseAllDocuments(stdout).map((d) => d.toJS() as Record<string, unknown>).filter((m) => m !== null);
    expect(workerContainer(manifests).command).toEqual(["node", "bin/compactd.js"]);
  });

  it("are the flags the service benchmark runs its worker with", () => {
    expect(WORKER_NODE_FLAGS).toEqual(flags);
  });
});
