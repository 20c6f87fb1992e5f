import { describe, expect, it } from "vitest";
import { collectFileOperations, formatFileOperations, MAX_FILE_PATHS, NO_FILE_OPERATIONS, splitFileOperations } from "../../src/core/fileOperations.js";
import { parseConversation } from "../../src/core/formats/parseConversation.js";

function calls(...list: [name: string, input: Record<string, unknown>][]) {
  return parseConversation(
    list.flatMap(([name, input], i) => [
      { role: "assistant", content: [{ type: "tool_use", id: `c${i}`, name, input }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: `c${i}`, content: "ok" }] },
    ]),
  ).messages;
}

describe("file operations", () => {
  it("records reads and writes from the common path arguments", () => {
    const ops = collectFileOperations(
      calls(["Read", { file_path: "/a.ts" }], ["view", { path: "b.md" }], ["Write", { file_path: "c.ts", content: "x" }], ["NotebookEdit", { notebook_path: "n.ipynb" }]),
      NO_FILE_OPERATIONS,
    );
    expect(ops).toEqual({ read: ["/a.ts", "b.md"], modified: ["c.ts", "n.ipynb"] });
  });

  it("lists a file that was read and then written only as modified", () => {
    const ops = collectFileOperations(calls(["read_file", { path: "x.ts" }], ["edit_file", { path: "x.ts" }]), NO_FILE_OPERATIONS);
    expect(ops).toEqual({ read: [], modified: ["x.ts"] });
  });

  it("ignores searches and commands, which touch no particular file", () => {
    const ops = collectFileOperations(calls(["grep", { path: "src", pattern: "x" }], ["bash", { command: "cat a.ts" }]), NO_FILE_OPERATIONS);
    expect(ops).toEqual({ read: [], modified: [] });
  });

  it("keeps at most 50 paths per list, evicting the least recently touched", () => {
    const many = Array.from({ length: 60 }, (_, i): [string, Record<string, unknown>] => ["read", { path: `f${i}.ts` }]);
    const ops = collectFileOperations(calls(["read", { path: "f0.ts" }], ...many.slice(1), ["read", { path: "f0.ts" }]), NO_FILE_OPERATIONS);
    expect(MAX_FILE_PATHS).toBe(50);
    expect(ops.read).toHaveLength(MAX_FILE_PATHS);
    expect(ops.read.at(-1)).toBe("f0.ts");
    expect(ops.read).not.toContain("f1.ts");
  });

  it("keeps a path this range touched when the inherited list is already full, evicting the oldest inherited one", () => {
    const full = Array.from({ length: MAX_FILE_PATHS }, (_, i) => `/w/${String(i).padStart(2, "0")}.txt`);
    for (const [tool, list] of [["read_file", "read"], ["edit_file", "modified"]] as const) {
      const inherited = splitFileOperations(`prose\n\n${formatFileOperations({ ...NO_FILE_OPERATIONS, [list]: full })}`).files;
      const ops = collectFileOperations(calls([tool, { path: "/w/newest.txt" }]), inherited);
      expect(ops[list]).toEqual([...full.slice(1), "/w/newest.txt"]);
      // And the next compaction, reading these blocks back, still has it.
      expect(splitFileOperations(formatFileOperations(ops)).files[list]).toContain("/w/newest.txt");
    }
  });

  it("takes a path given with spaces around it as that path, and a blank one as none, evicting nothing for either", () => {
    const full = Array.from({ length: MAX_FILE_PATHS }, (_, i) => `/w/${String(i).padStart(2, "0")}.txt`);
    const ops = collectFileOperations(calls(["edit_file", { path: " /w/00.txt " }], ["edit_file", { path: "  " }]), { read: [], modified: full });
    expect(ops.modified).toEqual([...full.slice(1), "/w/00.txt"]);
  });

  it("skips a call whose arguments did not parse (cut off mid-JSON) and one that names no path", () => {
    const raw = [
      { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "write_file", arguments: '{"path":"/w/a.html","content":"<htm' } }] },
      { role: "tool", tool_call_id: "c1", content: "error: invalid arguments" },
      { role: "assistant", content: null, tool_calls: [{ id: "c2", type: "function", function: { name: "write_file", arguments: '{"content":"no path here"}' } }] },
      { role: "tool", tool_call_id: "c2", content: "error: path is required" },
    ];
    expect(collectFileOperations(parseConversation(raw).messages, NO_FILE_OPERATIONS)).toEqual(NO_FILE_OPERATIONS);
  });

  it("round-trips through the tagged blocks appended to a summary", () => {
    const ops = { read: ["a.ts", "b.ts"], modified: ["c.ts"] };
    const summary = `## Goal\nship\n\n${formatFileOperations(ops)}`;
    expect(splitFileOperations(summary)).toEqual({ prose: "## Goal\nship", files: ops });
    expect(formatFileOperations(NO_FILE_OPERATIONS)).toBe("");
  });

  it("reads back a path holding a line break, or opening with a quote, as itself and as one path", () => {
    const odd = ["/srv/app/a\nb.ts", "/srv/app/c\r\nd.ts", '"quoted".ts', "/srv/app/tab\there.ts", "C:\\work\\new.ts"];
    const ops = collectFileOperations(calls(...odd.map((path): [string, Record<string, unknown>] => ["Write", { file_path: path, content: "x" }]), ["Read", { path: "/srv/app/plain.ts" }]), NO_FILE_OPERATIONS);
    expect(ops).toEqual({ read: ["/srv/app/plain.ts"], modified: odd });
    const { prose, files } = splitFileOperations(`## Goal\nship\n\n${formatFileOperations(ops)}`);
    expect(prose).toBe("## Goal\nship");
    expect(files).toEqual(ops);
    expect(formatFileOperations(files)).toBe(formatFileOperations(ops));
  });

  it("writes a path holding a block's tag so that it neither ends its block nor opens another", () => {
    const ops = { read: ["notes/</read-files>.md", "docs/<modified-files>.md"], modified: ["c.ts"] };
    const { prose, files } = splitFileOperations(`## Goal\nship\n\n${formatFileOperations(ops)}`);
    expect(prose).toBe("## Goal\nship");
    expect(files).toEqual({ read: ["notes/</ read-files>.md", "docs/< modified-files>.md"], modified: ["c.ts"] });
  });
});
