/**
 * An offline `compactd compact` never loads the Anthropic SDK: importing it
 * takes about 0.3 s, more than the rest of a small run. The CLI runs with a
 * module hook that refuses to resolve the SDK, so loading it would fail the
 * run; the same hook fails a run that does choose Anthropic, which shows the
 * hook bites.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/runCli.js";

const dir = mkdtempSync(path.join(tmpdir(), "compactd-no-sdk-"));
const hooks = path.join(dir, "hooks.mjs");
writeFileSync(
  hooks,
  `export async function resolve(specifier, context, next) {
    if (specifier.startsWith("@anthropic-ai/sdk")) throw new Error("this run loaded the Anthropic SDK");
    return next(specifier, context);
  }\n`,
);
const register = path.join(dir, "register.mjs");
writeFileSync(register, `import { register } from "node:module";\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`);
const withoutSdk = { NODE_OPTIONS: `--import=${pathToFileURL(register).href}` };

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("compactd compact with the offline summarizer", () => {
  it("compacts without loading the Anthropic SDK, chosen for want of a key or by --summarizer", async () => {
    for (const args of [[], ["--summarizer", "offline"]]) {
      const run = await runCli(["compact", "examples/session.json", "--context-window", "32000", ...args], { env: withoutSdk });
      expect(run.stderr).not.toContain("loaded the Anthropic SDK");
      expect(run.code).toBe(0);
      expect(JSON.parse(run.stdout)).toMatchObject({ messages: expect.any(Array) });
    }
  });

  it("is not what a run choosing Anthropic does: that run loads it", async () => {
    const run = await runCli(["compact", "examples/session.json", "--context-window", "32000"], {
      env: { ...withoutSdk, ANTHROPIC_API_KEY: "sk-test", ANTHROPIC_BASE_URL: "http://127.0.0.1:9" },
    });
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain("loaded the Anthropic SDK");
  });
});
