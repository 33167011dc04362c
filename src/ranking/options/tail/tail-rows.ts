/**
 * Which rows of a `tail` board are exact (docs/scaling.md, "The bounded tail"). A shard answers its best
 * rows, each with `dropped` (the most its count may lack: the bounds of the pruned slots whose filter
 * may hold it) and its hidden mass H (the bound of any item it does not list). Every true count then
 * lies in [score, score + dropped], and an item a shard left out of its answer counts at most
 * (the shard's last answered score when it answered a full page, else 0) + H.
 *
 * A row is exact (bound 0: its score and its competition rank are the true ones) when it is among the
 * first `exact` rows, its own `dropped` is 0, no answered row scoring at most as much may reach beyond
 * it (score + dropped ≤ its score), and no shard's left-out items may either.
 */
export interface TailShardRows {
  /** The shard's hidden mass H. */
  hidden: number;
  /** Whether the shard answered as many rows as asked (more may follow). */
  full: boolean;
  rows: ReadonlyArray<{ item: string; score: number; dropped: number }>;
}

export interface TailRow {
  item: string;
  score: number;
  rank: number;
  /** The most the true count may exceed `score`; 0 exactly when the row (score and rank) is exact. */
  bound: number;
}

/** The shards' rows merged in the board's order (score, then item id descending as Redis lists ties), certified. */
export function tailRows(shards: readonly TailShardRows[], exact: number): TailRow[] {
  const rows = shards.flatMap((shard) => shard.rows).sort((a, b) => b.score - a.score || (a.item < b.item ? 1 : -1));
  const leftOut = Math.max(
    0,
    ...shards.map((shard) => (shard.full ? shard.rows[shard.rows.length - 1].score : 0) + shard.hidden),
  );
  // reach[i]: the most any row at position i or later (all scoring at most rows[i]) may truly count.
  const reach = new Array<number>(rows.length + 1).fill(leftOut);
  for (let i = rows.length - 1; i >= 0; i--) reach[i] = Math.max(reach[i + 1], rows[i].score + rows[i].dropped);
  let ahead = 0;
  return rows.map((row, position) => {
    if (position > 0 && rows[position - 1].score > row.score) ahead = position;
    // `ahead` is also the first position of the row's score.
    const sure = position < exact && row.dropped === 0 && reach[ahead] <= row.score;
    return { item: row.item, score: row.score, rank: ahead + 1, bound: sure ? 0 : Math.max(row.dropped, 1) };
  });
}
