/**
 * A BPE vocabulary as the merge reads it (byteLevelBpe.ts): every token's
 * bytes in one pool, a hash of them to the token's rank, and a direct index
 * for the two-byte tokens most lookups are of. Flat typed arrays, so a
 * lookup allocates nothing and the collector has nothing to walk.
 *
 * Building it from gpt-tokenizer's vocabulary means loading 200,000 strings
 * and encoding each: 0.7–0.8 s on a 2-core VM, which every process that
 * counts paid once (the CLI on every run, each intake thread as it started).
 * The table's bytes are therefore also written out once, at `npm run build`
 * (src/build/writeTokenTable.ts), and a process reads them back in a few
 * milliseconds (tokenCounter.ts). The binary form is this module's: a header
 * (magic, token count, pool bytes, slot count) and the arrays, each starting
 * on a four-byte boundary so that they are views of the bytes, not copies.
 */

/** A BPE vocabulary: index = rank; a token is its text, or its bytes where they are not valid UTF-8. */
export type BpeRanks = readonly (string | readonly number[] | undefined)[];

/** A vocabulary keyed by the bytes of each token, for lookups that allocate nothing. */
export interface RankTable {
  /** Every token's bytes, one after another. */
  readonly pool: Uint8Array;
  readonly tokenStart: Uint32Array;
  readonly tokenEnd: Uint32Array;
  /** Open addressing: rank + 1 of the token hashed to a slot, 0 when empty. */
  readonly slots: Int32Array;
  readonly mask: number;
  /** The rank of every two-byte token by its bytes (-1: none): most lookups are of two bytes. */
  readonly pairRanks: Int32Array;
}

/** FNV-1a over `bytes[from, to)`: cheap, and spreads the short keys a vocabulary is made of. */
function hashBytes(bytes: Uint8Array, from: number, to: number): number {
  let hash = 0x811c9dc5;
  for (let i = from; i < to; i++) hash = Math.imul(hash ^ bytes[i]!, 0x01000193);
  return hash >>> 0;
}

export function buildRankTable(ranks: BpeRanks): RankTable {
  const encoder = new TextEncoder();
  const encoded: (Uint8Array | undefined)[] = ranks.map((token) =>
    token === undefined ? undefined : typeof token === "string" ? encoder.encode(token) : Uint8Array.from(token),
  );
  const totalBytes = encoded.reduce((sum, bytes) => sum + (bytes?.length ?? 0), 0);
  const pool = new Uint8Array(totalBytes);
  const tokenStart = new Uint32Array(ranks.length);
  const tokenEnd = new Uint32Array(ranks.length);
  // At most half full, so a probe sequence stays short.
  const size = 2 ** Math.ceil(Math.log2(ranks.length * 2 + 1));
  const slots = new Int32Array(size);
  const mask = size - 1;
  let offset = 0;
  encoded.forEach((bytes, rank) => {
    if (bytes === undefined) return;
    pool.set(bytes, offset);
    tokenStart[rank] = offset;
    tokenEnd[rank] = offset + bytes.length;
    offset += bytes.length;
    let slot = hashBytes(pool, tokenStart[rank]!, tokenEnd[rank]!) & mask;
    while (slots[slot] !== 0) slot = (slot + 1) & mask;
    slots[slot] = rank + 1;
  });
  const pairRanks = new Int32Array(256 * 256).fill(-1);
  encoded.forEach((bytes, rank) => {
    if (bytes?.length === 2) pairRanks[bytes[0]! * 256 + bytes[1]!] = rank;
  });
  return { pool, tokenStart, tokenEnd, slots, mask, pairRanks };
}

/** The rank of the token whose bytes are `bytes[from, to)`, or -1 when no token has them. */
export function rankOf(table: RankTable, bytes: Uint8Array, from: number, to: number): number {
  const { pool, tokenStart, tokenEnd, slots, mask } = table;
  const length = to - from;
  if (length === 2) return table.pairRanks[bytes[from]! * 256 + bytes[from + 1]!]!;
  for (let slot = hashBytes(bytes, from, to) & mask; slots[slot] !== 0; slot = (slot + 1) & mask) {
    const rank = slots[slot]! - 1;
    const start = tokenStart[rank]!;
    if (tokenEnd[rank]! - start !== length) continue;
    let same = true;
    for (let i = 0; i < length && same; i++) same = pool[start + i] === bytes[from + i];
    if (same) return rank;
  }
  return -1;
}

/** "BPE1", little-endian: what the binary form opens with. */
const MAGIC = 0x31455042;
/** Magic, token count, pool bytes, slot count. */
const HEADER_WORDS = 4;
const PAIRS = 256 * 256;

/** `table` as bytes, for {@link rankTableFromBytes}. */
export function rankTableBytes(table: RankTable): Uint8Array {
  const tokens = table.tokenStart.length;
  const layout = layoutOf(tokens, table.pool.length, table.slots.length);
  const bytes = new Uint8Array(layout.total);
  new Uint32Array(bytes.buffer, 0, HEADER_WORDS).set([MAGIC, tokens, table.pool.length, table.slots.length]);
  bytes.set(table.pool, layout.pool);
  new Uint32Array(bytes.buffer, layout.tokenStart, tokens).set(table.tokenStart);
  new Uint32Array(bytes.buffer, layout.tokenEnd, tokens).set(table.tokenEnd);
  new Int32Array(bytes.buffer, layout.slots, table.slots.length).set(table.slots);
  new Int32Array(bytes.buffer, layout.pairRanks, PAIRS).set(table.pairRanks);
  return bytes;
}

/**
 * The table `bytes` hold, as views of them (copied first only when they do
 * not start on a four-byte boundary). Throws, saying what is wrong, when
 * they are not a table {@link rankTableBytes} wrote: a damaged file must not
 * count tokens wrongly in silence.
 */
export function rankTableFromBytes(bytes: Uint8Array): RankTable {
  const aligned = bytes.byteOffset % 4 === 0 ? bytes : Uint8Array.from(bytes);
  if (aligned.length < HEADER_WORDS * 4) throw new Error(`a rank table has a ${HEADER_WORDS * 4}-byte header; these are ${aligned.length} bytes`);
  const [magic, tokens, poolBytes, slotCount] = new Uint32Array(aligned.buffer, aligned.byteOffset, HEADER_WORDS) as unknown as [number, number, number, number];
  if (magic !== MAGIC) throw new Error("not a rank table: its first four bytes are not BPE1");
  if (slotCount === 0 || (slotCount & (slotCount - 1)) !== 0 || slotCount <= tokens) {
    throw new Error(`a rank table's slot count must be a power of two above its ${tokens} tokens, not ${slotCount}`);
  }
  const layout = layoutOf(tokens, poolBytes, slotCount);
  if (aligned.length !== layout.total) throw new Error(`a rank table of ${tokens} tokens and ${poolBytes} pool bytes takes ${layout.total} bytes; these are ${aligned.length}`);
  const at = (offset: number): number => aligned.byteOffset + offset;
  return {
    pool: new Uint8Array(aligned.buffer, at(layout.pool), poolBytes),
    tokenStart: new Uint32Array(aligned.buffer, at(layout.tokenStart), tokens),
    tokenEnd: new Uint32Array(aligned.buffer, at(layout.tokenEnd), tokens),
    slots: new Int32Array(aligned.buffer, at(layout.slots), slotCount),
    mask: slotCount - 1,
    pairRanks: new Int32Array(aligned.buffer, at(layout.pairRanks), PAIRS),
  };
}

/** Where each array starts in the binary form, and its whole length. */
function layoutOf(tokens: number, poolBytes: number, slotCount: number) {
  const pool = HEADER_WORDS * 4;
  const tokenStart = pool + Math.ceil(poolBytes / 4) * 4;
  const tokenEnd = tokenStart + tokens * 4;
  const slots = tokenEnd + tokens * 4;
  const pairRanks = slots + slotCount * 4;
  return { pool, tokenStart, tokenEnd, slots, pairRanks, total: pairRanks + PAIRS * 4 };
}
