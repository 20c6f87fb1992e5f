/**
 * The last step of `npm run build`: writes o200k's rank table beside the
 * built token counter (tokenCounter.ts, O200K_TABLE_FILE), so that every
 * process of the build reads it in milliseconds instead of building it from
 * gpt-tokenizer's vocabulary in most of a second (rankTable.ts). Run as
 * `node dist/build/writeTokenTable.js`; it prints where it wrote and how much.
 */
import { writeFileSync } from "node:fs";
import { O200K_TABLE_FILE, o200kTableBytes } from "../core/tokenCounter.js";

const bytes = o200kTableBytes();
writeFileSync(O200K_TABLE_FILE, bytes);
process.stdout.write(`wrote ${O200K_TABLE_FILE} (${(bytes.length / 1024 / 1024).toFixed(1)} MiB)\n`);
