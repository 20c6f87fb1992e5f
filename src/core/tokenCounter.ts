/**
 * Counting the tokens of a text in time linear in its length, whatever the text.
 *
 * A BPE tokenizer first cuts text into pre-tokens (o200k keeps a run of
 * letters, or of punctuation and white space, as one piece) and then merges
 * each piece byte pair by byte pair. gpt-tokenizer's merge is quadratic in the
 * piece's length: a base64 image, a minified bundle or a hex dump pasted
 * without white space is one piece of megabytes, and counting it took minutes
 * (`'x'.repeat(80_000)` alone took seconds). Two things keep the cost linear:
 * the merge itself is compactd's own (byteLevelBpe.ts: n log n in the piece,
 * on gpt-tokenizer's o200k vocabulary and pre-tokenizer), and no call into it
 * is handed a pre-token longer than `MAX_PIECE_CHARS`: a longer piece is
 * counted in overlapping windows of that size.
 *
 * Text without such a piece goes to the tokenizer whole, so its count is
 * exactly the vocabulary's; ordinary text rarely has one (the corpus's longest
 * are runs of spaces in terminal output, and still count exactly). A long
 * piece's count stays within a fraction of a percent of the exact one
 * (test/core/tokenCounter.test.ts).
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { O200K_TOKEN_SPLIT_REGEX } from "gpt-tokenizer/encodingParams/constants";
import { byteLevelBpeCounter, type TokenCounter } from "./byteLevelBpe.js";
import { codePointBoundary } from "./clipText.js";
import { buildRankTable, rankTableBytes, rankTableFromBytes, type BpeRanks, type RankTable } from "./rankTable.js";

/**
 * The longest pre-token any call into the tokenizer is handed. The merge
 * costs n log n in a piece's length, so the windows could be any size; a
 * window of a few thousand characters keeps the overlap counted twice (see
 * `countLongPiece`) near 3% and the heap small (docs/BENCHMARKS.md,
 * "Adversarial text").
 */
export const MAX_PIECE_CHARS = 4096;

/**
 * The longest token of o200k_base (a run of 128 spaces). An overlap this wide
 * holds every token that could span a cut.
 */
const MAX_TOKEN_CHARS = 128;

/**
 * Every o200k pre-token lies within one run of letters and marks, or within
 * one run of characters that are neither letters nor digits (digits come in
 * pieces of at most three), plus one leading character and a contraction
 * suffix of at most three (`'ll`). Text whose runs stay this short therefore
 * has no piece longer than `MAX_PIECE_CHARS`, which a cheap scan can tell
 * without pre-tokenizing.
 */
const MAX_RUN_CHARS = MAX_PIECE_CHARS - 4;

/**
 * The o200k_base tokenizer: gpt-tokenizer's vocabulary and pre-tokenizer with
 * compactd's merge; special-token strings in user content count as ordinary
 * text, never as control tokens. Count through `inBoundedPieces(o200kTokens)`
 * (`countTextTokens`), never with this directly.
 */
export const o200kTokens: TokenCounter = byteLevelBpeCounter(loadO200kTable, O200K_TOKEN_SPLIT_REGEX);

/**
 * Where `npm run build` writes o200k's table (src/build/writeTokenTable.ts):
 * beside this module as built, so a process of the build reads it, and one
 * run from the sources (the tests) builds the table instead.
 */
export const O200K_TABLE_FILE = fileURLToPath(new URL("./o200k_base.table", import.meta.url));

/** How this process had its table: read from the build's file, or built from gpt-tokenizer's vocabulary. */
let tableOrigin: "read" | "built" | undefined;

/**
 * The counter's table: the build's file, read in a few milliseconds, when
 * there is one; otherwise built from the vocabulary, which takes most of a
 * second. A file that is there but damaged is an error, not a reason to
 * count with something else.
 */
function loadO200kTable(): RankTable {
  let bytes: Buffer;
  try {
    bytes = readFileSync(O200K_TABLE_FILE);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
    tableOrigin = "built";
    return buildRankTable(loadO200kRanks());
  }
  tableOrigin = "read";
  try {
    return rankTableFromBytes(bytes);
  } catch (err) {
    throw new Error(`${O200K_TABLE_FILE}: ${(err as Error).message}; npm run build writes it again`);
  }
}

/** o200k's table as the build writes it to {@link O200K_TABLE_FILE}, built from gpt-tokenizer's vocabulary. */
export function o200kTableBytes(): Uint8Array {
  return rankTableBytes(buildRankTable(loadO200kRanks()));
}

/**
 * gpt-tokenizer's o200k vocabulary, loaded to build the counter's table and
 * then let go of: by the build, and by a process run from the sources (the
 * tests, the benchmarks); a process of the build reads the table instead. As
 * an imported module it stayed in the heap for the life of every process that
 * counted: 200,000 strings and the module's 4 MB of source, 12 MB more live
 * heap than the table alone, which every full collection marks again and
 * holds its pause for. Loaded through `require` so that the module can be
 * dropped from the cache once read; nothing else loads it. (Node 22's V8
 * still keeps the compiled module in its compilation cache, about 10 MB:
 * test/core/tokenizerVocabulary.test.ts.)
 */
function loadO200kRanks(): BpeRanks {
  const require = createRequire(import.meta.url);
  const id = require.resolve("gpt-tokenizer/bpeRanks/o200k_base");
  try {
    return (require(id) as { default: BpeRanks }).default;
  } finally {
    delete require.cache[id];
  }
}

/**
 * `count` made linear: the text goes to it whole when no pre-token is longer
 * than `MAX_PIECE_CHARS`; otherwise the text between long pieces goes whole
 * and each long piece in overlapping windows.
 */
export function inBoundedPieces(count: TokenCounter): TokenCounter {
  return (text, ceiling = Infinity) => (hasLongRun(text) ? countAroundLongPieces(text, count, ceiling) : count(text, ceiling));
}

/** The tokens of `text` in o200k_base, in time linear in its length. */
export const countTextTokens: TokenCounter = inBoundedPieces(o200kTokens);

/**
 * Loads the counter's table now rather than on the first count (counting
 * nothing loads it), and says how long that took (0 once it is loaded) and
 * where the table came from. Building it takes most of a second (0.7–0.8 s on
 * a 2-core VM) and reading the build's file a few milliseconds; either way a
 * service process pays while starting, before it takes a request or a job,
 * not on the first one after every restart and scale-out. The API and the
 * worker log what this returns.
 */
export function prepareTokenCounter(): { readonly ms: number; readonly table: "read" | "built" } {
  const started = performance.now();
  countTextTokens("");
  return { ms: Math.round(performance.now() - started), table: tableOrigin! };
}

function countAroundLongPieces(text: string, count: TokenCounter, ceiling: number): number {
  let total = 0;
  let segmentStart = 0;
  for (const match of text.matchAll(O200K_TOKEN_SPLIT_REGEX)) {
    const piece = match[0];
    if (piece.length <= MAX_PIECE_CHARS) continue;
    if (match.index > segmentStart) total += count(text.slice(segmentStart, match.index), ceiling - total);
    if (total > ceiling) return total;
    total += countLongPiece(piece, count);
    if (total > ceiling) return total;
    segmentStart = match.index + piece.length;
  }
  if (segmentStart < text.length) total += count(text.slice(segmentStart), ceiling - total);
  return total;
}

/**
 * A long piece counted in windows of `MAX_PIECE_CHARS`, each starting
 * `MAX_TOKEN_CHARS` before the previous one ended. Cutting a piece changes
 * only the tokens near the cut; with the overlap in front of it, a window's new
 * characters merge as they would in the whole piece, so each window adds its
 * count less the count of its overlap alone.
 */
function countLongPiece(piece: string, uncached: TokenCounter): number {
  // A run of one character or of a repeated pattern repeats its windows: count each distinct window once.
  const windows = new Map<string, number>();
  const count = (window: string): number => {
    let tokens = windows.get(window);
    if (tokens === undefined) windows.set(window, (tokens = uncached(window)));
    return tokens;
  };
  let end = codePointBoundary(piece, MAX_PIECE_CHARS);
  let total = count(piece.slice(0, end));
  while (end < piece.length) {
    const overlapStart = codePointBoundary(piece, end - MAX_TOKEN_CHARS);
    const next = codePointBoundary(piece, Math.min(overlapStart + MAX_PIECE_CHARS, piece.length));
    total += count(piece.slice(overlapStart, next)) - count(piece.slice(overlapStart, end));
    end = next;
  }
  return total;
}

const LETTER = 1;
const MARK = 2;
const DIGIT = 4;
const OTHER = 8;

/** Character classes of the Basic Multilingual Plane, filled in as they are met (0: not yet). */
const BMP_CLASSES = new Uint8Array(0x10000);

function classify(char: string): number {
  if (/\p{L}/u.test(char)) return LETTER;
  if (/\p{M}/u.test(char)) return MARK;
  if (/\p{N}/u.test(char)) return DIGIT;
  return OTHER;
}

function classOf(codePoint: number): number {
  if (codePoint > 0xffff) return classify(String.fromCodePoint(codePoint));
  let known = BMP_CLASSES[codePoint]!;
  if (known === 0) {
    known = classify(String.fromCharCode(codePoint));
    BMP_CLASSES[codePoint] = known;
  }
  return known;
}

/**
 * Whether `text` has a run of letters and marks, or of characters that are
 * neither letters nor digits, longer than `MAX_RUN_CHARS` (a mark belongs to
 * both kinds of run, as it does in o200k's pattern). Lengths are in UTF-16
 * code units, as pre-tokens are measured.
 */
function hasLongRun(text: string): boolean {
  if (text.length <= MAX_RUN_CHARS) return false;
  let letters = 0;
  let others = 0;
  for (let i = 0; i < text.length; ) {
    const codePoint = text.codePointAt(i)!;
    const width = codePoint > 0xffff ? 2 : 1;
    const kind = classOf(codePoint);
    letters = kind & (LETTER | MARK) ? letters + width : 0;
    others = kind & (OTHER | MARK) ? others + width : 0;
    if (letters > MAX_RUN_CHARS || others > MAX_RUN_CHARS) return true;
    i += width;
  }
  return false;
}
