/** A row of an archive page as the moderation archive specs compare it. */
export type Row = { rank: number; item: string; score: number };

/** An archive page's rows, each cut to what the specs compare. */
export const rowsOf = (items: unknown): Row[] =>
  (items as Row[]).map(({ rank, item, score }) => ({ rank, item, score }));

/** The brute force: the stored rows without the items left out now, competition ranks among the rest. */
export function visibleRowsModel(stored: Row[], visible: (item: string) => boolean): Row[] {
  const rows = stored.filter((row) => visible(row.item));
  return rows.map((row) => ({
    rank: 1 + rows.filter((other) => other.score > row.score).length,
    item: row.item,
    score: row.score,
  }));
}
