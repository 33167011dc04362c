/**
 * Sharded boards (pure): which shard holds an item, and how shard listings merge into one board
 * listing in exactly the order and ranks an unsharded board answers.
 */

/** A listed item; `rank` is the competition rank (1, 2, 2, 4). */
export interface ListedItem {
  rank: number;
  item: string;
  score: number;
}

export interface ScoredItem {
  item: string;
  score: number;
}

/**
 * The shard of an item: FNV-1a (32 bit) of its UTF-8 bytes modulo the shard count. Stable across
 * processes and versions, which is all a shard assignment needs; changing it would misplace data.
 */
export function shardOf(item: string, shards: number): number {
  if (shards <= 1) return 0;
  let hash = 0x811c9dc5;
  for (const byte of Buffer.from(item, 'utf8')) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % shards;
}

/**
 * Board order: higher score first; equal scores in descending byte order of the item id, which is
 * the order Redis' ZREVRANGE gives an unsharded board.
 */
export function compareListed(a: ScoredItem, b: ScoredItem): number {
  if (a.score !== b.score) return b.score - a.score;
  return Buffer.compare(Buffer.from(b.item, 'utf8'), Buffer.from(a.item, 'utf8'));
}

/** Merges listings that are each already in board order into one list in board order. */
export function mergeListings(listings: ScoredItem[][]): ScoredItem[] {
  return listings.flat().sort(compareListed);
}

/**
 * Ranks rows in board order whose first row sits at `firstPosition` (0-based) of the whole listing
 * and has `higherThanFirst` items scoring above it: a row ties the previous one's rank on an equal
 * score, else its rank is its 1-based position.
 */
export function rankRows(rows: ScoredItem[], firstPosition: number, higherThanFirst: number): ListedItem[] {
  const ranked: ListedItem[] = [];
  rows.forEach((row, i) => {
    const previous = ranked[i - 1];
    const rank =
      previous === undefined
        ? higherThanFirst + 1
        : previous.score === row.score
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
