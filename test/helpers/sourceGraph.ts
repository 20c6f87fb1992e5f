/**
 * The repository's TypeScript modules and what each imports and exports,
 * read from the source text (the import and export statements of this code
 * base are plain enough for a few regular expressions; a compiler would be a
 * heavy dependency for two structural tests).
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { repoRoot } from "./repoRoot.js";

export interface SourceModule {
  /** Path from the repository root, with forward slashes: `src/queue/jobLifecycle.ts`. */
  readonly file: string;
  /** Every module it imports or re-exports from, resolved to repository paths (packages left out). */
  readonly imports: readonly ImportEdge[];
  /** Names of the values and types it declares as exported (re-exports excluded). */
  readonly exports: readonly ExportedName[];
}

export interface ImportEdge {
  readonly target: string;
  /** Imported names; `*` for a namespace import or `export *`. */
  readonly names: readonly string[];
}

export interface ExportedName {
  readonly name: string;
  /** A type or interface: erased at run time. */
  readonly typeOnly: boolean;
}

/** The `.ts` files under `folders` (relative to the repository root), parsed. */
export function readModules(folders: readonly string[]): SourceModule[] {
  return folders.flatMap((folder) => listTs(path.join(repoRoot, folder))).map(parseModule);
}

function listTs(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "node_modules" ? [] : listTs(full);
    return entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts") ? [full] : [];
  });
}

const IMPORT_FROM = /(?:^|\n)\s*(import|export)\s+(type\s+)?([^;]*?)\s+from\s+"([^"]+)"/g;
const SIDE_EFFECT_IMPORT = /(?:^|\n)\s*import\s+"([^"]+)"/g;
const DYNAMIC_IMPORT = /import\(\s*"([^"]+)"\s*\)/g;
const DECLARED_EXPORT = /(?:^|\n)export\s+(?:declare\s+)?(?:default\s+)?(?:async\s+)?(function\*?|const|let|class|abstract\s+class|enum|type|interface)\s+([A-Za-z_$][\w$]*)/g;

function parseModule(full: string): SourceModule {
  const file = path.relative(repoRoot, full).split(path.sep).join("/");
  const text = readFileSync(full, "utf8");
  const imports: ImportEdge[] = [];
  const add = (specifier: string, names: string[]): void => {
    const target = resolve(file, specifier);
    if (target !== undefined) imports.push({ target, names });
  };
  for (const [, , , clause, specifier] of text.matchAll(IMPORT_FROM)) add(specifier!, namesOf(clause!));
  for (const [, specifier] of text.matchAll(SIDE_EFFECT_IMPORT)) add(specifier!, []);
  for (const [, specifier] of text.matchAll(DYNAMIC_IMPORT)) add(specifier!, ["*"]);
  const exports = [...text.matchAll(DECLARED_EXPORT)].map(([, kind, name]) => ({ name: name!, typeOnly: kind === "type" || kind === "interface" }));
  return { file, imports, exports };
}

/** The names an import or re-export clause brings in: `{ a, type b as c }` → a, b; `* as x` and `*` → `*`. */
function namesOf(clause: string): string[] {
  if (clause.includes("*")) return ["*"];
  const braces = /\{([^}]*)\}/.exec(clause);
  const names = braces === null ? [] : braces[1]!.split(",").map((part) => part.trim().replace(/^type\s+/, "").split(/\s+as\s+/)[0]!.trim());
  // A default import (`import x from`, `import x, { y } from`) names `default`.
  if (/^[A-Za-z_$][\w$]*\s*(,|$)/.test(clause.trim()) && !clause.trim().startsWith("{")) names.push("default");
  return names.filter((name) => name !== "");
}

/** A relative specifier (`../queue/x.js`) as a repository path (`src/queue/x.ts`); undefined for packages. */
function resolve(from: string, specifier: string): string | undefined {
  if (!specifier.startsWith(".")) return undefined;
  const joined = path.posix.normalize(path.posix.join(path.posix.dirname(from), specifier));
  return joined.replace(/\.js$/, ".ts");
}
