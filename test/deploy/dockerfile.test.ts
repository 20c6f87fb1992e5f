import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { CONFIG_VARIABLES, loadConfig } from "../../src/config.js";
import { copyOf, envOf, execForm, parseDockerfile, type Dockerfile, type Stage } from "./dockerfile.js";

const ROOT = new URL("../../", import.meta.url);
const text = readFileSync(new URL("Dockerfile", ROOT), "utf8");
const dockerfile = parseDockerfile(text);
const runtime = dockerfile.stages.at(-1)!;

function all(stage: Stage, keyword: string): string[] {
  return stage.instructions.filter((i) => i.keyword === keyword).map((i) => i.args);
}

function stageNamed(file: Dockerfile, name: string | undefined): Stage | undefined {
  return file.stages.find((stage) => stage.name === name || String(stage.index) === name);
}

/** The user the container runs as: the last USER of the final stage, as uid[:gid]. */
function runtimeUser(file: Dockerfile): string | undefined {
  return all(file.stages.at(-1)!, "USER").at(-1);
}

function npmCi(stage: Stage): string[] {
  return all(stage, "RUN").filter((run) => /\bnpm (ci|install|i)\b/.test(run));
}

/** The value the service takes for `env` when it is unset. */
function configDefault(env: string): string {
  const variable = CONFIG_VARIABLES.find((v) => v.env === env);
  if (variable === undefined) throw new Error(`${env} is not a config variable`);
  return String(loadConfig({})[variable.field]);
}

/** Whether a .dockerignore pattern list keeps `path` out of the build context (last match wins). */
function ignored(patterns: readonly string[], path: string): boolean {
  let result = false;
  for (const raw of patterns) {
    const negated = raw.startsWith("!");
    const pattern = (negated ? raw.slice(1) : raw).replace(/^\/+|\/+$/g, "");
    const regex = new RegExp(`^${pattern.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, "[^/]*").replace(/\?/g, "[^/]")}(/.*)?$`);
    if (regex.test(path)) result = !negated;
  }
  return result;
}

describe("Dockerfile", () => {
  it("builds in a stage with the dev dependencies that runs the TypeScript build", () => {
    const build = dockerfile.stages.find((stage) => all(stage, "RUN").some((run) => /\bnpm run build\b/.test(run)));
    expect(build, "a stage runs `npm run build`").toBeDefined();
    const installs = npmCi(build!);
    expect(installs.length).toBeGreaterThan(0);
    for (const install of installs) expect(install).not.toMatch(/--omit=dev|--production/);
    expect(build).not.toBe(runtime);
  });

  it("runs on a Node 22 slim or distroless base", () => {
    expect(runtime.image).toMatch(/^(node:22(\.\d+)*-(bookworm-)?slim|gcr\.io\/distroless\/nodejs22-debian\d+)(@sha256:[0-9a-f]{64})?$/);
  });

  it("copies node_modules into the runtime only from a stage that installed production dependencies", () => {
    const copies = all(runtime, "COPY").map(copyOf);
    const modules = copies.filter((copy) => copy.sources.some((source) => source.endsWith("node_modules")));
    expect(modules).toHaveLength(1);
    const origin = stageNamed(dockerfile, modules[0]!.from);
    expect(origin, "node_modules comes from an earlier stage").toBeDefined();
    const installs = npmCi(origin!);
    expect(installs.length).toBeGreaterThan(0);
    for (const install of installs) expect(install).toMatch(/\bnpm ci\b.*--omit=dev/);
  });

  it("builds, in the stage that installs production dependencies, each one whose install script package.json allows, and loads it", () => {
    const pkg = JSON.parse(readFileSync(new URL("package.json", ROOT), "utf8")) as {
      dependencies: Record<string, string>;
      allowScripts: Record<string, boolean>;
    };
    const allowed = Object.entries(pkg.allowScripts).filter(([, allow]) => allow).map(([name]) => name);
    expect(allowed.length, "zstd-napi's binding at least").toBeGreaterThan(0);
    const copy = all(runtime, "COPY").map(copyOf).find((c) => c.sources.some((source) => source.endsWith("node_modules")))!;
    const runs = all(stageNamed(dockerfile, copy.from)!, "RUN").join("\n");
    // `npm ci --ignore-scripts` there runs none, so each is rebuilt by name after it.
    expect(runs).toMatch(/npm ci\b[^\n]*--ignore-scripts/);
    for (const name of allowed) {
      if (!(name in pkg.dependencies)) continue;
      expect(runs, `${name} is rebuilt`).toMatch(new RegExp(`npm rebuild [^\\n&]*\\b${name}\\b`));
      expect(runs, `${name} is loaded once built`).toContain(`require('${name}')`);
    }
  });

  it("installs nothing in the runtime stage and takes only the compiled dist from the build stage", () => {
    expect(npmCi(runtime)).toEqual([]);
    const build = dockerfile.stages.find((stage) => all(stage, "RUN").some((run) => /\bnpm run build\b/.test(run)))!;
    const fromBuild = all(runtime, "COPY")
      .map(copyOf)
      .filter((copy) => copy.from !== undefined && stageNamed(dockerfile, copy.from) === build);
    expect(fromBuild.flatMap((copy) => copy.sources)).toEqual(["/app/dist"]);
  });

  it("runs as a numeric non-root user", () => {
    const user = runtimeUser(dockerfile);
    expect(user, "the final stage sets USER").toBeDefined();
    const [uid, gid] = user!.split(":");
    expect(uid).toMatch(/^\d+$/);
    expect(Number(uid)).toBeGreaterThan(0);
    if (gid !== undefined) expect(gid).toMatch(/^\d+$/);
  });

  it("would run as root if the USER line were dropped, which the user check catches", () => {
    const withoutUser = parseDockerfile(text.replace(/^USER .*$/m, ""));
    expect(runtimeUser(withoutUser)).toBeUndefined();
  });

  it("sets NODE_ENV=production in the runtime stage", () => {
    const env = Object.assign({}, ...all(runtime, "ENV").map(envOf)) as Record<string, string>;
    expect(env.NODE_ENV).toBe("production");
  });

  it("starts node itself as PID 1 (exec form) on the CLI, serving the API unless given `worker`", () => {
    const entrypoint = all(runtime, "ENTRYPOINT");
    const cmd = all(runtime, "CMD");
    expect(entrypoint).toHaveLength(1);
    expect(cmd).toHaveLength(1);
    expect(execForm(entrypoint[0]!)).toEqual(["node", "bin/compactd.js"]);
    expect(execForm(cmd[0]!)).toEqual(["serve"]);
    const pkg = JSON.parse(readFileSync(new URL("package.json", ROOT), "utf8")) as { bin: Record<string, string> };
    expect(pkg.bin.compactd).toBe("bin/compactd.js");
    expect(readFileSync(new URL("bin/compactd.js", ROOT), "utf8")).toContain("../dist/");
  });

  it("exposes the API and metrics ports the configuration defaults to", () => {
    const ports = all(runtime, "EXPOSE").flatMap((args) => args.split(/\s+/));
    expect(ports.sort()).toEqual([configDefault("PORT"), configDefault("METRICS_PORT")].sort());
  });

  it("declares an exec-form HEALTHCHECK, since the image has no shell tools to rely on", () => {
    const healthchecks = all(runtime, "HEALTHCHECK");
    expect(healthchecks).toHaveLength(1);
    const command = /\bCMD\s+(\[.*\])$/.exec(healthchecks[0]!)?.[1];
    expect(command).toBeDefined();
    expect(execForm(command!)?.[0]).toBe("node");
    expect(command).toContain("/healthz");
  });

  it("keeps node_modules, dist and .git out of the build context but not anything the Dockerfile copies", () => {
    const patterns = readFileSync(new URL(".dockerignore", ROOT), "utf8")
      .split(/\r?\n/)
      .map((line) => line.trim())
      .filter((line) => line !== "" && !line.startsWith("#"));
    for (const path of ["node_modules", "dist", ".git", "node_modules/bullmq/package.json"]) {
      expect(ignored(patterns, path), path).toBe(true);
    }
    const fromContext = dockerfile.stages
      .flatMap((stage) => all(stage, "COPY").map(copyOf))
      .filter((copy) => copy.from === undefined)
      .flatMap((copy) => copy.sources);
    expect(fromContext.length).toBeGreaterThan(0);
    for (const source of fromContext) expect(ignored(patterns, source), source).toBe(false);
  });
});
