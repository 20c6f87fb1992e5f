/**
 * The repository's root: the nearest folder above this file holding
 * package.json, whether the tests run from `test/helpers` or compiled into
 * `dist/test/helpers`.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

function findRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!existsSync(path.join(dir, "package.json")) && path.dirname(dir) !== dir) dir = path.dirname(dir);
  return dir;
}

export const repoRoot = findRoot();
