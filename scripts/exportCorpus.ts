/**
 * Writes every conversation of the shared corpus (Claude Code and pi sessions,
 * tau-bench tasks) as a JSON file `compactd compact` takes, converted the way
 * the tests convert them, so the CLI can be tried on real sessions:
 *
 *   npx tsc -p tsconfig.json && node dist/scripts/exportCorpus.js /tmp/corpus
 */
import { listCorpusConversations, writeConversationFiles } from "../test/helpers/corpus.js";

const out = process.argv[2];
if (out === undefined) {
  process.stderr.write("usage: node dist/scripts/exportCorpus.js <output directory>\n");
  process.exit(2);
}
const written = writeConversationFiles(out, listCorpusConversations());
process.stdout.write(`${written.size} conversations written to ${out}\n`);
