import { describe, expect, it } from "vitest";
import { choosePathRoot, pathRootLine, relativeTo, statedPathRoot } from "../../src/core/pathRoot.js";

const project = "/home/me/projects/spotter";

describe("choosePathRoot", () => {
  it("picks the project directory: deeper than the home directory, wider than one of its folders", () => {
    const paths = [
      `${project}/lib/spotter/parser.ex`,
      `${project}/lib/spotter/lexer.ex`,
      `${project}/test/spotter/parser_test.exs`,
      `${project}/mix.exs`,
      "/home/me/.claude/plans/plan.md",
    ];
    expect(choosePathRoot(paths)).toBe(project);
  });

  it("picks nothing when too few paths share a directory, or the paths are relative", () => {
    expect(choosePathRoot([`${project}/a.ex`, `${project}/b.ex`])).toBeUndefined();
    expect(choosePathRoot(["lib/a.ex", "lib/b.ex", "lib/c.ex"])).toBeUndefined();
    expect(choosePathRoot(["/a.ex", "/b.ex", "/c/d.ex"])).toBeUndefined();
  });

  it("picks only a directory its line can state and read back: none holding a line break or a backtick", () => {
    for (const odd of ["/srv/we\nird/app", "/srv/we`ird/app"]) {
      expect(choosePathRoot([`${odd}/a.ts`, `${odd}/b.ts`, `${odd}/c.ts`])).toBeUndefined();
    }
  });

  it("is deterministic whatever the order of the paths", () => {
    const paths = ["/srv/a/x/1.ts", "/srv/a/x/2.ts", "/srv/a/x/3.ts", "/srv/b/y/1.ts", "/srv/b/y/2.ts", "/srv/b/y/3.ts"];
    expect(choosePathRoot(paths)).toBe(choosePathRoot([...paths].reverse()));
  });
});

describe("the stated path root", () => {
  it("is read back from the line that states it", () => {
    expect(statedPathRoot(`${pathRootLine(project)}\n\n## Where the work stopped\n- x`)).toBe(project);
    expect(statedPathRoot("## Goal\nPaths are everywhere.")).toBeUndefined();
    expect(statedPathRoot(undefined)).toBeUndefined();
  });

  it("is read only from the summary's first line, where the envelope writes it, not from a line quoted further down", () => {
    const quoted = `## Where the work stopped\n- The old notes said:\n${pathRootLine("/tmp/evil")}\n- x`;
    expect(statedPathRoot(quoted)).toBeUndefined();
    expect(statedPathRoot(`${pathRootLine(project)}\n\n${quoted}`)).toBe(project);
    expect(statedPathRoot(`${pathRootLine(project)} and more`)).toBeUndefined();
  });

  it("makes only the paths under it relative", () => {
    expect(relativeTo(project, `${project}/lib/a.ex`)).toBe("lib/a.ex");
    expect(relativeTo(project, `${project}-old/lib/a.ex`)).toBe(`${project}-old/lib/a.ex`);
    expect(relativeTo(project, project)).toBe(project);
    expect(relativeTo(undefined, `${project}/lib/a.ex`)).toBe(`${project}/lib/a.ex`);
  });
});
