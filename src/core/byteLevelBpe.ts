/**
 * Counting the tokens of one pre-token with byte-level BPE, in time n log n in
 * its length, on a vocabulary held in flat typed arrays.
 *
 * gpt-tokenizer's own merge rescans every pair after each merge and looks each
 * candidate pair up by decoding its bytes to a string (or, for the byte
 * sequences that are not valid UTF-8 on their own, by binary search). On text
 * its merge cache seldom hits (random base64, Chinese or emoji without
 * spaces, words run together) that costs 6–18 times what ordinary text costs
 * per megabyte (docs/BENCHMARKS.md, "Adversarial text"). Here the candidate
 * pairs wait in a heap and a pair's rank is one hash probe over its bytes, so
 * the cost per byte barely depends on what the text is.
 *
 * The merge order is BPE's: the pair of lowest rank first, the leftmost of
 * equal ranks first. That makes the count the vocabulary's own, and
 * test/core/byteLevelBpe.test.ts holds it equal to gpt-tokenizer's on corpus,
 * adversarial and random Unicode text, with one exception where this count is
 * the vocabulary's and gpt-tokenizer's is not: a byte-order mark, whose three
 * bytes are one o200k token that gpt-tokenizer's string-keyed lookup misses.
 */
import { rankOf, type RankTable } from "./rankTable.js";

/** A rank and a position packed into one float, so the heap orders by rank, then leftmost. */
const POSITION_RANGE = 2 ** 32;

/**
 * A min-heap of candidate pairs, four children to a node (half the depth of a
 * binary heap, for sifts that read a few adjacent keys per level): the key
 * packs rank and start, and each entry carries the end its pair had when pushed.
 */
class PairHeap {
  key = new Float64Array(0);
  /** The start of each entry's pair, kept beside the key so reading it back needs no division. */
  start = new Int32Array(0);
  end = new Int32Array(0);
  size = 0;

  /** Empties the heap and makes room for `capacity` entries. */
  reset(capacity: number): void {
    if (this.key.length < capacity) {
      this.key = new Float64Array(capacity);
      this.start = new Int32Array(capacity);
      this.end = new Int32Array(capacity);
    }
    this.size = 0;
  }

  /** Adds an entry without ordering it; `heapify` orders them all at once. */
  append(rank: number, start: number, end: number): void {
    this.key[this.size] = rank * POSITION_RANGE + start;
    this.start[this.size] = start;
    this.end[this.size++] = end;
  }

  heapify(): void {
    for (let i = (this.size - 2) >> 2; i >= 0; i--) this.siftDown(i, this.key[i]!, this.start[i]!, this.end[i]!);
  }

  push(rank: number, start: number, end: number): void {
    const keys = this.key;
    const starts = this.start;
    const ends = this.end;
    const key = rank * POSITION_RANGE + start;
    let i = this.size++;
    while (i > 0) {
      const parent = (i - 1) >> 2;
      if (keys[parent]! <= key) break;
      keys[i] = keys[parent]!;
      starts[i] = starts[parent]!;
      ends[i] = ends[parent]!;
      i = parent;
    }
    keys[i] = key;
    starts[i] = start;
    ends[i] = end;
  }

  /** Removes the top entry. */
  pop(): void {
    this.size--;
    this.siftDown(0, this.key[this.size]!, this.start[this.size]!, this.end[this.size]!);
  }

  /** Moves the entry (`key`, `start`, `end`) down from slot `i` to where the heap order puts it. */
  private siftDown(i: number, key: number, start: number, end: number): void {
    const keys = this.key;
    const starts = this.start;
    const ends = this.end;
    const size = this.size;
    for (;;) {
      const first = 4 * i + 1;
      if (first >= size) break;
      let child = first;
      const last = Math.min(first + 4, size);
      for (let c = first + 1; c < last; c++) if (keys[c]! < keys[child]!) child = c;
      if (keys[child]! >= key) break;
      keys[i] = keys[child]!;
      starts[i] = starts[child]!;
      ends[i] = ends[child]!;
      i = child;
    }
    keys[i] = key;
    starts[i] = start;
    ends[i] = end;
  }
}

/**
 * Scratch space reused from piece to piece (grown when a piece is longer), so
 * counting allocates nothing per piece but its UTF-8 bytes.
 */
class MergeScratch {
  next = new Int32Array(0);
  prev = new Int32Array(0);
  alive = new Uint8Array(0);
  readonly heap = new PairHeap();

  /** Makes room for a piece of `bytes` bytes: a pair per byte at first, at most two more per merge. */
  reset(bytes: number): void {
    if (this.next.length < bytes) {
      const size = Math.max(bytes, this.next.length * 2, 64);
      this.next = new Int32Array(size);
      this.prev = new Int32Array(size);
      this.alive = new Uint8Array(size);
    }
    this.heap.reset(bytes * 3);
  }
}

/** Pushes the pair of the part at `start` and the part after it, when the two make a token. */
function pushPair(table: RankTable, bytes: Uint8Array, length: number, next: Int32Array, heap: PairHeap, start: number): void {
  const right = next[start]!;
  if (right >= length) return;
  const end = next[right]!;
  const rank = rankOf(table, bytes, start, end);
  if (rank >= 0) heap.push(rank, start, end);
}

/**
 * The number of tokens BPE merges `bytes[0, length)` into.
 *
 * Parts are a linked list of byte offsets (a part starts at its index and ends
 * where the next begins). Every adjacent pair that is a token waits in a heap
 * with the end it had when pushed; an entry whose left part has been merged
 * away, or whose pair now ends elsewhere, is stale and skipped. Parts only
 * ever merge, so an entry whose left part lives and whose pair still ends at
 * the same byte still describes two adjacent parts.
 */
function mergeCount(table: RankTable, bytes: Uint8Array, length: number, scratch: MergeScratch): number {
  scratch.reset(length);
  const { next, prev, alive, heap } = scratch;
  for (let i = 0; i < length; i++) {
    next[i] = i + 1;
    prev[i] = i - 1;
    alive[i] = 1;
  }
  // The first pairs are all known at once: lay them out and heapify in linear time.
  for (let i = 0; i + 1 < length; i++) {
    const rank = table.pairRanks[bytes[i]! * 256 + bytes[i + 1]!]!;
    if (rank >= 0) heap.append(rank, i, i + 2);
  }
  heap.heapify();

  let parts = length;
  while (heap.size > 0) {
    const start = heap.start[0]!;
    const end = heap.end[0]!;
    heap.pop();
    const right = next[start]!;
    if (alive[start] === 0 || right >= length || next[right] !== end) continue;
    alive[right] = 0;
    next[start] = end;
    if (end < length) prev[end] = start;
    parts--;
    pushPair(table, bytes, length, next, heap, start);
    if (prev[start]! >= 0) pushPair(table, bytes, length, next, heap, prev[start]!);
  }
  return parts;
}

/**
 * Writes `text[start, end)` into `buffer` as UTF-8 and returns its length in
 * bytes. Most pieces are ASCII, which is copied here without the native call
 * (and the slice) that `encodeInto` costs per piece.
 */
function writeUtf8(text: string, start: number, end: number, buffer: Uint8Array, encoder: InstanceType<typeof TextEncoder>): number {
  for (let i = start; i < end; i++) {
    const code = text.charCodeAt(i);
    if (code >= 0x80) return encoder.encodeInto(text.slice(start, end), buffer).written;
    buffer[i - start] = code;
  }
  return end - start;
}

/**
 * One call into a tokenizer: the number of tokens of `text`. Given a
 * `ceiling`, it may stop once the count passes it and answer any number
 * above it: a caller that only needs to know whether a text fits a budget
 * does not pay for the rest of a long one.
 */
export type TokenCounter = (text: string, ceiling?: number) => number;

/**
 * A counter on the vocabulary table `loadTable` gives (rankTable.ts),
 * pre-tokenizing with `splitPattern` (a global regex, as the vocabulary's own
 * tokenizer uses). The table is loaded on the first count, not on import: a
 * process that never counts (the CLI on a conversation small enough not to
 * price) never pays for it, and a service process chooses to pay while it
 * starts (`prepareTokenCounter`). Once it is loaded the loader is let go of,
 * and whatever it held with it.
 */
export function byteLevelBpeCounter(loadTable: () => RankTable, splitPattern: RegExp): TokenCounter {
  let table: RankTable | undefined;
  let load: (() => RankTable) | undefined = loadTable;
  const scratch = new MergeScratch();
  const encoder = new TextEncoder();
  let buffer = new Uint8Array(1024);
  const pieces = new PieceWalker(splitPattern);
  return (text, ceiling = Infinity) => {
    if (table === undefined) {
      table = load!();
      load = undefined;
    }
    // Pieces that needed merging, by text, for this call only: a text repeats
    // its words and identifiers (and a run cut in windows repeats whole
    // windows), while nothing is kept from one text to the next.
    let merged: Map<string, number> | undefined;
    let count = 0;
    for (let at = pieces.next(text, 0); at >= 0 && count <= ceiling; at = pieces.next(text, pieces.end)) {
      const { start, end } = pieces;
      // UTF-8 is at most three bytes per UTF-16 code unit.
      if (buffer.length < (end - start) * 3) buffer = new Uint8Array((end - start) * 3);
      const written = writeUtf8(text, start, end, buffer, encoder);
      if (written === 1 || rankOf(table, buffer, 0, written) >= 0) {
        count++;
        continue;
      }
      const piece = text.slice(start, end);
      let tokens = merged?.get(piece);
      if (tokens === undefined) {
        tokens = mergeCount(table, buffer, written, scratch);
        (merged ??= new Map()).set(piece, tokens);
      }
      count += tokens;
    }
    return count;
  };
}

/**
 * The pre-tokens of a text, as the split pattern's matches (what `matchAll`
 * yields), given as positions rather than strings. `matchAll` makes an array
 * and a string for every piece, and a token count's pieces are nearly all one
 * token: that garbage was a large share of what counting allocated, in
 * processes where collections set the latency tail. The pattern's pieces
 * follow one another, so a sticky copy of it matched at the end of the last
 * piece finds the next one with `test`, which allocates nothing; where it
 * does not match there, the global pattern searches on, as `matchAll` would.
 */
class PieceWalker {
  /** The current piece is `text.slice(start, end)`. */
  start = 0;
  end = 0;
  private readonly sticky: RegExp;
  private readonly search: RegExp;

  constructor(pattern: RegExp) {
    const flags = pattern.flags.replace(/[gy]/g, "");
    this.sticky = new RegExp(pattern.source, `${flags}y`);
    this.search = new RegExp(pattern.source, `${flags}g`);
  }

  /** Finds the first piece at or after `from`: its start, or -1 when there is none. */
  next(text: string, from: number): number {
    for (let at = from; at < text.length; ) {
      this.sticky.lastIndex = at;
      if (this.sticky.test(text)) {
        this.start = at;
        this.end = this.sticky.lastIndex;
      } else {
        this.search.lastIndex = at;
        const match = this.search.exec(text);
        if (match === null) return -1;
        this.start = match.index;
        this.end = match.index + match[0].length;
      }
      // An empty match counts no token; step past it as matchAll does.
      if (this.end > this.start) return this.start;
      at = this.start + 1;
    }
    return -1;
  }
}