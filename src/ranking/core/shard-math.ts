/**
 * Sharded boards (pure): which shard holds an item, and how shard listings merge into one board
 * listing in exactly the order and ranks an unsharded board answers.
 */

import type { ListedItem, ScoredItem } from './ranking.types';

/**
 * The shard of an item: FNV-1a (32 bit) of its UTF-8 bytes modulo the shard count. Stable across
 * processes and versions, which is all a shard assignment needs; changing it would misplace data.
 */
export function shardOf(item: string, shards: number): number {
  if (shards <= 1) return 0;
  return fnv1a(item) % shards;
}

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/**
 * FNV-1a of a text's UTF-8 bytes. An ASCII text's bytes are its character codes, read without encoding
 * it: a sharded board's write hashes its item more than once, and a Buffer and its iterator each time
 * were most of the hash's cost. Any other text is hashed from its encoding.
 */
function fnv1a(text: string): number {
  let hash = FNV_OFFSET;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code >= 0x80) return fnv1aOfBytes(Buffer.from(text, 'utf8'));
    hash = Math.imul(hash ^ code, FNV_PRIME) >>> 0;
  }
  return hash;
}

function fnv1aOfBytes(bytes: Uint8Array): number {
  let hash = FNV_OFFSET;
  for (let i = 0; i < bytes.length; i++) hash = Math.imul(hash ^ bytes[i], FNV_PRIME) >>> 0;
  return hash;
}

/**
 * Board order: higher score first; equal scores in descending byte order of the item id, which is
 * the order Redis' ZREVRANGE gives an unsharded board. On a sharded `ties: first` board rows carry tie
 * marks (the strict order's members: a fixed-width mark of digits, then the id): equal scores then come
 * greater mark first (the one that reached its score first), in byte order as the shard's order zset. An `order: asc` board lists the exact
 * reverse (ZRANGE's: lower score first, equal scores in ascending byte order of item id): compareAscending.
 */
export function compareListed(a: ScoredItem, b: ScoredItem): number {
  if (a.score !== b.score) return b.score - a.score;
  if (a.tie && b.tie && a.tie !== b.tie) return compareUtf8(b.tie, a.tie);
  return compareUtf8(b.item, a.item);
}

/** The board order of an `order: asc` board: compareListed's reverse (it keeps no tie marks). */
export function compareAscending(a: ScoredItem, b: ScoredItem): number {
  return compareListed(b, a);
}

/** The board order of a board whose lower scores rank higher (`ascending`), or of any other. */
export function boardOrder(ascending = false): (a: ScoredItem, b: ScoredItem) => number {
  return ascending ? compareAscending : compareListed;
}

/**
 * Compares two strings in the byte order of their UTF-8 encodings without encoding them (a deep sharded
 * read sorts thousands of tied rows): UTF-8 byte order is code point order, which is UTF-16 code unit
 * order once surrogates (U+D800-DFFF, which encode code points above U+FFFF) are moved above U+E000-FFFF.
 */
export function compareUtf8(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return codePointOrder(x) - codePointOrder(y);
  }
  return a.length - b.length;
}

function codePointOrder(unit: number): number {
  if (unit < 0xd800) return unit;
  return unit >= 0xe000 ? unit - 0x800 : unit + 0x2000;
}

/** Merges listings that are each already in board order into one list in board order (`ascending`: lower scores first). */
export function mergeListings<Row extends ScoredItem>(listings: Row[][], ascending = false): Row[] {
  return listings.flat().sort(boardOrder(ascending));
}

/**
 * Listings each already in its shard's order (which on a `ties: first` board is not the order of ids
 * among equal scores) merged without reordering any of them: at each step the best of their heads by
 * board order. So the first n rows depend only on each listing's first n, and a page read deeper never
 * answers a row ahead of one a shallower read placed before it (pages by offset stay consistent).
 */
export function mergeHeads<Row extends ScoredItem>(listings: Row[][], ascending = false): Row[] {
  const order = boardOrder(ascending);
  const next = listings.map(() => 0);
  const merged: Row[] = [];
  for (;;) {
    let best = -1;
    listings.forEach((rows, l) => {
      if (next[l] < rows.length && (best < 0 || order(rows[next[l]], listings[best][next[best]]) < 0)) best = l;
    });
    if (best < 0) return merged;
    merged.push(listings[best][next[best]++]);
  }
}

/**
 * Ranks rows in board order whose first row sits at `firstPosition` (0-based) of the whole listing
 * and has `higherThanFirst` items scoring above it: a row ties the previous one's rank on an equal
 * score (and an equal mark: a tiebreak's, whose rows all carry one), else its rank is its 1-based position.
 */
export function rankRows(
  rows: ScoredItem[],
  firstPosition: number,
  higherThanFirst: number,
  strict = false,
): ListedItem[] {
  const ranked: ListedItem[] = [];
  rows.forEach((row, i) => {
    const previous = ranked[i - 1];
    const rank = strict
      ? firstPosition + i + 1
      : previous === undefined
        ? higherThanFirst + 1
        : previous.score === row.score && rows[i - 1].tie === row.tie
          ? previous.rank
          : firstPosition + i + 1;
    ranked.push({ rank, item: row.item, score: row.score });
  });
  return ranked;
}

/** Groups entries by the shard of their item, keeping their order within each shard. */
export function groupByShard<T extends { item: string }>(entries: T[], shards: number): Map<number, T[]> {
  const groups = new Map<number, T[]>();
  for (const entry of entries) {
    const shard = shardOf(entry.item, shards);
    const group = groups.get(shard);
    if (group) group.push(entry);
    else groups.set(shard, [entry]);
  }
  return groups;
}

/** Reads up to `count` rows of one shard's listing from its position `from` on; fewer when the shard holds no more. */
export type ShardRowReader<Row extends ScoredItem = ScoredItem> = (
  shard: number,
  from: number,
  count: number,
) => Promise<Row[]>;

/**
 * Rows each shard is first asked for when a page ends at `depth`: its share of a uniform spread (ids
 * are hashed, so shard counts in the top `depth` are binomial), plus three standard deviations, so one
 * round almost always suffices.
 */
export function firstShareRows(depth: number, shards: number): number {
  const mean = depth / shards;
  return Math.min(depth, Math.ceil(mean + 3 * Math.sqrt(mean)) + 1);
}

/**
 * Most rows mergeShardHeads reads, whatever the data: the first round reads `shards` shares; after it,
 * a shard asked again holds only rows above the depth-th row read so far, so one round asks for at most
 * 2 x depth + shards rows; a shard is asked again only in consecutive rounds (the depth-th row read only
 * moves up), each time for at least as many rows as it holds, so at most log2(depth / share) + 1 rounds follow.
 */
export function maxRowsRead(depth: number, shards: number): number {
  const share = firstShareRows(depth, shards);
  const laterRounds = Math.ceil(Math.log2(depth / share)) + 1;
  return shards * share + laterRounds * (2 * depth + shards);
}

/**
 * The first `depth` rows of the merged listing of `shards` shards, in board order, read progressively:
 * every shard is first asked for its share (firstShareRows); then, while the rows known to be exact are
 * fewer than `depth`, only the shards whose last row read lies above the depth-th row read so far are
 * asked again, each for at least as many rows as it already gave (so a skewed shard is caught up in a
 * few rounds) and for its share of what is missing. No shard is asked past `depth` rows: a shard's
 * (depth + 1)-th row has `depth` rows above it. Answers the rows and how many were read.
 */
export async function mergeShardHeads<Row extends ScoredItem>(
  shards: number,
  depth: number,
  read: ShardRowReader<Row>,
  ascending = false,
): Promise<{ rows: Row[]; rowsRead: number }> {
  const heads: Row[][] = Array.from({ length: shards }, () => []);
  const seen: Array<Set<string>> = heads.map(() => new Set());
  // A shard is open while it may hold rows above the depth-th row that were not read yet.
  const open = heads.map(() => true);
  let asks = heads.map(() => firstShareRows(depth, shards));
  let rowsRead = 0;
  for (;;) {
    const replies = await Promise.all(
      asks.map((count, shard) => (count > 0 ? read(shard, heads[shard].length, count) : undefined)),
    );
    replies.forEach((rows, shard) => {
      if (rows === undefined) return;
      rowsRead += rows.length;
      keepNew(heads[shard], seen[shard], rows);
      if (rows.length < asks[shard] || heads[shard].length >= depth) open[shard] = false;
    });
    const merged = mergeListings(heads, ascending);
    const exact = exactRows(merged, heads, open);
    if (exact >= depth || !open.includes(true)) return { rows: merged.slice(0, depth), rowsRead };
    asks = nextAsks(merged, heads, open, depth, exact, boardOrder(ascending));
  }
}

/** Appends the rows a shard has not given yet: a write racing the read may move an item across the boundary between two rounds. */
function keepNew<Row extends ScoredItem>(head: Row[], seen: Set<string>, rows: Row[]): void {
  for (const row of rows) {
    if (seen.has(row.item)) continue;
    seen.add(row.item);
    head.push(row);
  }
}

/** Every merged row up to the first last row of an open shard is exact: no unread row can come before it. */
function exactRows(merged: ScoredItem[], heads: ScoredItem[][], open: boolean[]): number {
  const position = new Map(merged.map((row, i) => [row.item, i]));
  let exact = merged.length;
  heads.forEach((head, shard) => {
    if (open[shard]) exact = Math.min(exact, (position.get(head[head.length - 1].item) ?? 0) + 1);
  });
  return exact;
}

/**
 * The next round's asks: the open shards whose last row read lies above the depth-th row read so far,
 * each for at least as many rows as it gave and for its share of what is missing, never past `depth`.
 */
function nextAsks(
  merged: ScoredItem[],
  heads: ScoredItem[][],
  open: boolean[],
  depth: number,
  exact: number,
  compare: (a: ScoredItem, b: ScoredItem) => number,
): number[] {
  const deepest = merged[depth - 1];
  const lastOf = (shard: number) => heads[shard][heads[shard].length - 1];
  const needy = heads
    .map((_, shard) => shard)
    .filter((shard) => open[shard] && (deepest === undefined || compare(lastOf(shard), deepest) < 0));
  const share = Math.ceil((depth - exact) / needy.length);
  const asks = heads.map(() => 0);
  for (const shard of needy) {
    asks[shard] = Math.min(depth - heads[shard].length, Math.max(share, heads[shard].length));
  }
  return asks;
}
