import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { summaryMessage } from "../../src/core/summaryEnvelope.js";
import { DEFAULT_MODEL } from "../../src/summarizers/anthropic.js";
import { conversation, fillerText, reactTurn } from "../helpers/conversations.js";
import { deeplyNestedJson, toolCallWithInput } from "../helpers/deepJson.js";
import { startFakeAnthropic, type FakeAnthropic } from "../helpers/fakeAnthropic.js";
import { stderrOnTerminal } from "../helpers/onTerminal.js";
import { runCli } from "../helpers/runCli.js";

const noKey = { ANTHROPIC_API_KEY: "" };
let dir: string;
let longFile: string;
let smallFile: string;
const longSession = conversation(...Array.from({ length: 10 }, () => reactTurn({ rounds: 6, toolResultChars: 3_500 })));

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "compactd-cli-"));
  longFile = path.join(dir, "long.json");
  smallFile = path.join(dir, "small.json");
  await writeFile(longFile, JSON.stringify({ system: "You are terse.", messages: longSession }));
  await writeFile(smallFile, JSON.stringify(reactTurn({ rounds: 1 })));
});

describe("compactd compact", () => {
  it("lists its exit codes in --help, exiting 0", async () => {
    const run = await runCli(["compact", "--help"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^Exit codes:/m);
    for (const code of ["0", "1", "2", "3", "141"]) expect(run.stdout).toMatch(new RegExp(`^  ${code} +\\S`, "m"));
  });

  it("compacts with the offline summarizer when no key is set, says so on stderr, and names it in the result", async () => {
    const run = await runCli(["compact", longFile, "--context-window", "100000", "--keep-recent-tokens", "8000"], { env: noKey });
    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(/ANTHROPIC_API_KEY is not set; using the offline summarizer/);
    expect(run.stderr.trim().split("\n")).toHaveLength(1);
    const out = JSON.parse(run.stdout);
    expect(Object.keys(out)).toEqual(
      expect.arrayContaining(["messages", "summary", "reason", "tokensBefore", "tokensAfter", "messagesBefore", "messagesAfter", "degraded", "summarizer", "splitTurn", "checkpoint", "omitted", "firstKeptIndex"]),
    );
    expect(out).toMatchObject({ reason: "manual", degraded: false, summarizer: "offline", messagesBefore: longSession.length, stillAboveThreshold: false });
    expect(out.summary).toContain("## Where the work stopped");
    // The input's shape: its top-level system prompt comes back first, unchanged.
    expect(Object.keys(out)[0]).toBe("system");
    expect(out.system).toBe("You are terse.");
    expect(out.tokensAfter).toBeLessThan(out.tokensBefore);
    expect(out.messages.slice(1)).toEqual(longSession.slice(out.firstKeptIndex));
  });

  it("says on stderr when the result is still above the window's threshold, because the newest message alone is larger", async () => {
    const file = path.join(dir, "huge-newest.json");
    await writeFile(file, JSON.stringify([...longSession, { role: "user", content: fillerText(200_000, 7) }]));
    const run = await runCli(["compact", file, "--context-window", "32000", "--summarizer", "offline"], { env: noKey });
    expect(run.code).toBe(0);
    const out = JSON.parse(run.stdout);
    expect(out.tokensAfter).toBeGreaterThan(32_000 - 16_384);
    expect(out.stillAboveThreshold).toBe(true);
    expect(run.stderr).toBe(
      `compactd: ${file}: still ${out.tokensAfter} tokens after compaction, above the 15616 the window leaves besides the reserve (the system prompt and the newest messages are kept verbatim, whatever their size); compacting again will not help: lower --keep-recent-tokens or --max-summary-tokens, shrink the largest messages, or use a larger window\n`,
    );
  });

  it("exits 3 with nothing_to_compact when everything fits the keep-recent budget", async () => {
    const run = await runCli(["compact", smallFile, "--context-window", "200000"], { env: noKey });
    expect(run.code).toBe(3);
    expect(JSON.parse(run.stdout)).toEqual({ status: "nothing_to_compact", stillAboveThreshold: false });
    expect(run.stderr).toBe("compactd: ANTHROPIC_API_KEY is not set; using the offline summarizer (structured extract, no model)\n");
  });

  it("exits 3 and says on stderr when nothing to compact leaves the context above the threshold: a greeting before a paste larger than the window", async () => {
    const file = path.join(dir, "greeting-then-paste.json");
    await writeFile(file, JSON.stringify({ messages: [{ role: "user", content: "hi" }, { role: "assistant", content: "hello" }, { role: "user", content: "word ".repeat(60_000) }] }));
    const run = await runCli(["compact", file, "--context-window", "32000", "--summarizer", "offline"], { env: noKey });
    expect(run.code).toBe(3);
    expect(JSON.parse(run.stdout)).toEqual({ status: "nothing_to_compact", stillAboveThreshold: true });
    expect(run.stderr).toBe(
      `compactd: ${file}: nothing to compact, yet the context is still above the 15616 the window leaves besides the reserve (the system prompt and the newest messages are kept verbatim, whatever their size); compaction cannot shrink it: shrink the largest messages, or use a larger window\n`,
    );
    // A directory's line for the file says the same.
    const sub = await mkdtemp(path.join(tmpdir(), "compactd-cli-above-"));
    await writeFile(path.join(sub, "paste.json"), await readFile(file));
    const inDir = await runCli(["compact", sub, "--context-window", "32000", "--summarizer", "offline"], { env: noKey });
    expect(inDir.code).toBe(3);
    expect(JSON.parse(inDir.stdout)).toEqual({ file: path.join(sub, "paste.json"), status: "nothing_to_compact", stillAboveThreshold: true });
    expect(inDir.stderr).toContain("nothing to compact, yet the context is still above the 15616");
  });

  it("reads the conversation from stdin with -", async () => {
    const run = await runCli(["compact", "-", "--context-window", "100000", "--keep-recent-tokens", "8000", "--summarizer", "offline", "--reason", "overflow"], {
      env: noKey,
      stdin: JSON.stringify(longSession),
    });
    expect(run.code).toBe(0);
    expect(run.stderr).toBe("");
    expect(JSON.parse(run.stdout).reason).toBe("overflow");
  });

  it.each([
    [["compact", "MISSING.json", "--context-window", "1000"], /MISSING\.json: cannot read \(ENOENT\)/],
    [["compact", "FILE", "--context-window", "lots"], /--context-window takes a positive whole number, got "lots"/],
    [["compact", "FILE", "--context-window", "100000", "--stall-timeout-ms", "3600001"], /--stall-timeout-ms takes at most 3600000 \(an hour\), got "3600001"/],
    [["compact", "FILE", "--context-window", "100000", "--stall-timeout-ms", "2147483648"], /--stall-timeout-ms takes at most 3600000/],
    [["compact", "FILE", "--context-window", "100000", "--stall-timeout-ms", "999"], /--stall-timeout-ms takes at least 1000 \(a second\), got "999"/],
    [["compact", "FILE", "--context-window", "100000001"], /--context-window takes at most 100000000 \(a hundred million tokens\), got "100000001"/],
    [["compact", "FILE", "--context-window", "100000", "--usage-tokens", "9007199254740991"], /--usage-tokens takes at most 100000000/],
    [["compact", "FILE", "--context-window", "100000", "--summarizer", "offline", "--model", "claude-x"], /--model names the model of the Anthropic summarizer; it has no use with --summarizer offline/],
    [["compact", "FILE"], /required option '--context-window <tokens>' not specified/],
    [["compact", "FILE", "--context-window", "1000", "--reason", "bored"], /--reason.*bored/],
    [["compact", "BAD", "--context-window", "1000"], /not valid JSON/],
    [["compact", "INVALID", "--context-window", "1000"], /messages\[1\]\.role/],
    [["compact", "FILE", "--context-window", "1000"], /--context-window 1000 leaves no room for the conversation: 16384 tokens are reserved .* at least 18432$/m],
    [["compact", "FILE", "--context-window", "5000", "--reserve-tokens", "4000"], /at least 6048$/m],
  ])("exits 2 with a one-line message for bad usage or input: %j", async (args, message) => {
    const bad = path.join(dir, "bad.json");
    const invalid = path.join(dir, "invalid.json");
    await writeFile(bad, "{ not json");
    await writeFile(invalid, JSON.stringify([{ role: "user", content: "hi" }, { role: "robot", content: "beep" }]));
    const resolved = args.map((a) => (a === "FILE" ? smallFile : a === "BAD" ? bad : a === "INVALID" ? invalid : a));
    const run = await runCli(resolved, { env: noKey });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(message);
    expect(run.stderr.trim().split("\n")).toHaveLength(1);
    expect(run.stderr).not.toMatch(/\n\s+at /);
  });

  it("compacts a conversation holding a million-character run without white space (a pasted dump) in bounded time", async () => {
    const dump = path.join(dir, "dump.json");
    const run = "x".repeat(1_000_000);
    // Once in the head (summarized) and once in the newest message (counted exactly by the tail walk).
    const messages = [{ role: "user", content: `Here is the dump: ${run}` }, ...longSession, { role: "user", content: `And again: ${run}` }];
    await writeFile(dump, JSON.stringify(messages));
    const result = await runCli(["compact", dump, "--context-window", "200000", "--summarizer", "offline"], { env: noKey });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout).messages.at(-1).content).toBe(`And again: ${run}`);
  }, 60_000);

  it("exits 2 naming the field when a tool input nests 50,000 levels deep", async () => {
    const deep = path.join(dir, "deep.json");
    await writeFile(deep, toolCallWithInput(deeplyNestedJson(50_000)));
    const result = await runCli(["compact", deep, "--context-window", "100000"], { env: noKey });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/messages\[1\]\.content\[0\]\.input: nests arrays and objects more than \d+ levels deep/);
    expect(result.stderr.trim().split("\n")).toHaveLength(1);
  });

  it("refuses --summarizer anthropic without a key, naming the variable", async () => {
    const run = await runCli(["compact", longFile, "--context-window", "100000", "--summarizer", "anthropic"], { env: noKey });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/ANTHROPIC_API_KEY/);
  });

  it("keeps an OpenAI conversation's leading system and developer messages first, with no top-level system added", async () => {
    const [first, ...rest] = longSession as { role: string; content: unknown }[];
    const openai = [
      { role: "system", content: "You are terse." },
      { role: "developer", content: "Prefer small diffs." },
      first,
      ...rest.map((m) => (m.role === "assistant" ? { role: "assistant", content: "ok" } : { role: "user", content: JSON.stringify(m.content) })),
    ];
    const run = await runCli(["compact", "-", "--context-window", "100000", "--keep-recent-tokens", "8000", "--summarizer", "offline"], {
      env: noKey,
      stdin: JSON.stringify({ messages: openai }),
    });
    expect(run.code).toBe(0);
    const out = JSON.parse(run.stdout);
    expect(out).not.toHaveProperty("system");
    expect(out.messages.slice(0, 2)).toEqual(openai.slice(0, 2));
    expect(out.messages[2].content).toContain(out.summary.slice(0, 40));
  });

  it("exits 3 for a directory where nothing needed compacting, and 0 when something was compacted", async () => {
    const nothing = await mkdtemp(path.join(tmpdir(), "compactd-cli-nothing-"));
    await writeFile(path.join(nothing, "a.json"), JSON.stringify(reactTurn({ rounds: 1 })));
    await writeFile(path.join(nothing, "b.json"), JSON.stringify(reactTurn({ rounds: 1 })));
    const args = ["--context-window", "100000", "--keep-recent-tokens", "8000"];
    expect((await runCli(["compact", nothing, ...args], { env: noKey })).code).toBe(3);
    await writeFile(path.join(nothing, "c.json"), JSON.stringify(longSession));
    expect((await runCli(["compact", nothing, ...args], { env: noKey })).code).toBe(0);
  });

  it("compacts a directory file by file, one JSON line each", async () => {
    const sub = await mkdtemp(path.join(tmpdir(), "compactd-cli-dir-"));
    await writeFile(path.join(sub, "a.json"), JSON.stringify(longSession));
    await writeFile(path.join(sub, "b.json"), JSON.stringify(reactTurn({ rounds: 1 })));
    await writeFile(path.join(sub, "c.json"), "oops");
    const run = await runCli(["compact", sub, "--context-window", "100000", "--keep-recent-tokens", "8000"], { env: noKey });
    const lines = run.stdout.trim().split("\n").map((l) => JSON.parse(l));
    expect(lines.map((l) => [path.basename(l.file), l.status])).toEqual([
      ["a.json", "compacted"],
      ["b.json", "nothing_to_compact"],
      ["c.json", "error"],
    ]);
    expect(run.code).toBe(2);
  });

  describe("with the Anthropic summarizer", () => {
    let fake: FakeAnthropic;
    beforeAll(async () => {
      fake = await startFakeAnthropic({ script: () => ({ kind: "reply", text: "## Goal\nShip the parser." }) });
    });
    afterAll(() => fake.close());

    it("summarizes through the Messages API when ANTHROPIC_API_KEY is set", async () => {
      const run = await runCli(["compact", longFile, "--context-window", "100000", "--keep-recent-tokens", "8000", "--model", "claude-test-1"], {
        env: { ANTHROPIC_API_KEY: "sk-test", ANTHROPIC_BASE_URL: fake.url },
      });
      expect(run.stderr).toBe("");
      expect(run.code).toBe(0);
      const out = JSON.parse(run.stdout);
      expect(out.degraded).toBe(false);
      expect(out.summary).toContain("Ship the parser.");
      expect(fake.requests.length).toBeGreaterThanOrEqual(1);
      expect(fake.requests[0]!.body).toMatchObject({ model: "claude-test-1", stream: true });
    });

    it("takes a blank COMPACTD_MODEL as unset, as the service does, and uses the default model", async () => {
      const before = fake.requests.length;
      const run = await runCli(["compact", longFile, "--context-window", "100000", "--keep-recent-tokens", "8000"], {
        env: { ANTHROPIC_API_KEY: "sk-test", ANTHROPIC_BASE_URL: fake.url, COMPACTD_MODEL: "  " },
      });
      expect(run.stderr).toBe("");
      expect(run.code).toBe(0);
      expect(fake.requests.length).toBeGreaterThan(before);
      expect(fake.requests[before]!.body).toMatchObject({ model: DEFAULT_MODEL });
    });

    it.each([
      ["--model", ["--model", "claude nope"], {}],
      ["COMPACTD_MODEL", [], { COMPACTD_MODEL: "claude\tnope" }],
    ])("refuses a model id no model could have from %s, naming it, before asking the API anything", async (source, args, env) => {
      const before = fake.requests.length;
      const run = await runCli(["compact", longFile, "--context-window", "100000", ...args], {
        env: { ANTHROPIC_API_KEY: "sk-test", ANTHROPIC_BASE_URL: fake.url, ...env },
      });
      expect(run.code).toBe(2);
      expect(run.stderr).toContain(source);
      expect(run.stderr).toContain("without spaces or control characters");
      expect(run.stdout).toBe("");
      expect(fake.requests.length).toBe(before);
    });

    it.each(["not a url", "ftp://127.0.0.1/", "http://127.0.0.1:4010/\tv1"])("refuses ANTHROPIC_BASE_URL=%j, as the service does, instead of degrading every summary", async (baseUrl) => {
      const run = await runCli(["compact", longFile, "--context-window", "100000"], { env: { ANTHROPIC_API_KEY: "sk-test", ANTHROPIC_BASE_URL: baseUrl } });
      expect(run.code).toBe(2);
      expect(run.stdout).toBe("");
      expect(run.stderr).toBe(`compactd: ANTHROPIC_BASE_URL must be a URL starting with http:// or https://, without spaces or control characters; got ${JSON.stringify(baseUrl)}\n`);
    });

    it("summarizes a session whose text holds lone surrogates, which the API refuses, and gives the kept messages back unchanged", async () => {
      // Broken bytes in what the user pasted and in a tool's output; JSON.stringify writes them as `\ud800` escapes.
      const broken = conversation(...Array.from({ length: 10 }, () => reactTurn({ rounds: 6, toolResultChars: 3_500 })));
      broken[0] = { role: "user", content: "Fix the parser: it chokes on \ud800 here" };
      broken[2] = { role: "user", content: [{ type: "tool_result", tool_use_id: toolUseIdOf(broken[1]), content: "read \udc00 bytes" }] };
      broken.push({ role: "user", content: "Last words \ud83d alone" }, { role: "assistant", content: "Noted." });
      const file = path.join(dir, "lone-surrogates.json");
      await writeFile(file, JSON.stringify({ messages: broken }));
      const before = fake.requests.length;

      const run = await runCli(["compact", file, "--context-window", "100000", "--keep-recent-tokens", "8000"], {
        env: { ANTHROPIC_API_KEY: "sk-test", ANTHROPIC_BASE_URL: fake.url },
      });

      expect(run.code).toBe(0);
      const out = JSON.parse(run.stdout);
      expect(out.degradedReason).toBeNull();
      const sent = fake.requests.slice(before).map((r) => r.userText);
      expect(sent.some((text) => text.includes("it chokes on \ufffd here"))).toBe(true);
      expect(sent.some((text) => text.includes("read \ufffd bytes"))).toBe(true);
      expect(out.summary).toContain("it chokes on \ufffd here");
      expect(JSON.stringify(out.summary)).not.toMatch(/\\ud[89a-f]/);
      expect(out.messages.slice(-2)).toEqual([{ role: "user", content: "Last words \ud83d alone" }, { role: "assistant", content: "Noted." }]);
    });
  });
});

/** The id of the first tool call in an Anthropic assistant message. */
function toolUseIdOf(message: unknown): string {
  const content = (message as { content: { type: string; id?: string }[] }).content;
  return content.find((block) => block.type === "tool_use")!.id!;
}

describe("compactd compact when the Anthropic API fails", () => {
  let failing: FakeAnthropic;
  beforeAll(async () => {
    failing = await startFakeAnthropic({ script: () => ({ kind: "error", status: 500 }) });
  });
  afterAll(() => failing.close());
  const compactAgainst = (baseUrl: string, target: string) =>
    runCli(["compact", target, "--context-window", "100000", "--keep-recent-tokens", "8000"], { env: { ANTHROPIC_API_KEY: "sk-test", ANTHROPIC_BASE_URL: baseUrl } });

  it("keeps the previous summary whole in the degraded summary and says nothing of it was cut", async () => {
    const facts = Array.from({ length: 60 }, (_, i) => `- fact ${i}: ${fillerText(180, i * 211).replace(/\s+/g, " ")}`);
    const previous = ["## Goal", ...facts.slice(0, 30), "", "## Critical Context", ...facts.slice(30)].join("\n");
    const file = path.join(dir, "previous-summary.json");
    await writeFile(file, JSON.stringify({ messages: [summaryMessage(previous), ...longSession] }));

    const run = await compactAgainst(failing.url, file);

    expect(run.code).toBe(0);
    const out = JSON.parse(run.stdout);
    expect(out.degraded).toBe(true);
    expect(out.degradedReason).toContain("HTTP 500");
    expect(facts.filter((fact) => !out.summary.includes(fact.slice(2)))).toEqual([]);
    expect(out.previousSummaryCharsCut).toBe(0);
  });

  it("says on stderr that the summary is degraded and why, once per cause, still exiting 0 with the result", async () => {
    const run = await compactAgainst(failing.url, longFile);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout).degraded).toBe(true);
    const lines = run.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]!.startsWith(`compactd: ${longFile}: degraded, the offline summary stands in: history summarizer failed: HTTP 500 `)).toBe(true);
    expect(lines[0]!.match(/history summarizer failed/g)).toHaveLength(1);
  });

  it("names each degraded file of a directory on stderr", async () => {
    const sub = await mkdtemp(path.join(tmpdir(), "compactd-cli-degraded-"));
    await writeFile(path.join(sub, "a.json"), JSON.stringify(longSession));
    await writeFile(path.join(sub, "b.json"), JSON.stringify(reactTurn({ rounds: 1 })));
    const run = await compactAgainst(failing.url, sub);
    expect(run.code).toBe(0);
    const lines = run.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]!.startsWith(`compactd: ${path.join(sub, "a.json")}: degraded, the offline summary stands in: `)).toBe(true);
    expect(lines[0]).toContain("HTTP 500");
  });

  it("does not wait out a 429 whose retry-after asks for an hour: it degrades at once, naming the 429", async () => {
    const limited = await startFakeAnthropic({ script: () => ({ kind: "error", status: 429, retryAfterMs: 3_600_000 }) });
    try {
      const run = await compactAgainst(limited.url, longFile);
      expect(run.code).toBe(0);
      const out = JSON.parse(run.stdout);
      expect(out.degraded).toBe(true);
      expect(out.degradedReason).toContain("HTTP 429");
      // Every request was a first try: the SDK never slept on the hour to send a retry.
      expect(limited.requests.length).toBeGreaterThan(0);
      expect(limited.requests.map((r) => r.headers["x-stainless-retry-count"])).toEqual(limited.requests.map(() => "0"));
    } finally {
      await limited.close();
    }
  });
});

describe("compactd compact reading its input", () => {
  const args = (file: string) => ["compact", file, "--context-window", "100000", "--keep-recent-tokens", "8000", "--summarizer", "offline"];

  it("takes a file, or stdin, that opens with a UTF-8 byte order mark, as editors on Windows write them", async () => {
    const text = `\ufeff${JSON.stringify({ messages: longSession })}`;
    const file = path.join(dir, "bom.json");
    await writeFile(file, text);
    for (const run of [await runCli(args(file), { env: noKey }), await runCli(args("-"), { env: noKey, stdin: text })]) {
      expect(run.stderr).toBe("");
      expect(run.code).toBe(0);
      expect(JSON.parse(run.stdout).messages.at(-1)).toEqual(longSession.at(-1));
    }
  });

  const latin1 = Buffer.from(JSON.stringify([{ role: "user", content: "caf\u00e9 au lait" }]), "latin1");
  it.each([
    ["an empty file", Buffer.alloc(0), /: is empty; expected a conversation as JSON/],
    ["white space only", Buffer.from(" \n\t\r\n"), /: is empty; expected a conversation as JSON/],
    ["Latin-1 text", latin1, new RegExp(`: is not UTF-8 text: byte 0xE9 at offset ${latin1.indexOf(0xe9)} \\(line 1\\) does not decode`)],
    ["UTF-16 text", Buffer.from(`\ufeff${JSON.stringify(longSession)}`, "utf16le"), /: is UTF-16 text/],
    ["a syntax error in pretty-printed JSON", Buffer.from('{\n  "messages": [\n    {"role": "user", "content": "hi"},\n  ]\n}'), /: not valid JSON at line 4, column 3: expected a value \(an object, array, string, number, true, false or null\), found "]"$/m],
    ["JSON Lines that is no session log compactd reads", Buffer.from('{"type":"user","message":{"role":"user","content":"hi"}}\n{"type":"assistant"}\n'), /: holds one JSON value per line \(JSON Lines/],
  ])("refuses %s with exit 2 and one line saying what is wrong where", async (_, bytes, message) => {
    const file = path.join(dir, "input.json");
    await writeFile(file, bytes);
    const run = await runCli(args(file), { env: noKey });
    expect(run.code).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.stderr).toMatch(message);
    expect(run.stderr.startsWith(`compactd: ${file}: `)).toBe(true);
    expect(run.stderr.trim().split("\n")).toHaveLength(1);
  });
});

describe("compactd compact on a directory, watched from a terminal", () => {
  it("shows progress on stderr when stderr is a TTY, and none when it is not", async () => {
    const sub = await mkdtemp(path.join(tmpdir(), "compactd-cli-tty-"));
    await writeFile(path.join(sub, "a.json"), JSON.stringify(longSession));
    await writeFile(path.join(sub, "b.json"), JSON.stringify(reactTurn({ rounds: 1 })));
    const args = ["compact", sub, "--context-window", "100000", "--keep-recent-tokens", "8000", "--summarizer", "offline"];
    const tty = await stderrOnTerminal(args, { ANTHROPIC_API_KEY: "" });
    expect(tty).toContain("[1/2] a.json");
    expect(tty).toContain("[2/2] b.json");
    const piped = await runCli(args, { env: noKey });
    expect(piped.stderr).toBe("");
  });

  it("says it is reading the conversation from the terminal, and how to end it, when - is a terminal", async () => {
    // Short lines: a terminal's line discipline takes at most 4096 characters a line.
    const typed = `${JSON.stringify(reactTurn({ rounds: 1 }), null, 1)}\n\x04`;
    const screen = await stderrOnTerminal(["compact", "-", "--context-window", "100000", "--summarizer", "offline"], {}, typed);
    expect(screen).toContain("compactd: reading the conversation from the terminal; end it with Ctrl-D on a line of its own");
  });
});
