import type { LookupService } from '../../src/ranking/lookup/lookup.service';
import type { RankingService } from '../../src/ranking/ranking.service';

/** A row of a window's listing as a model answers it, best first. */
export type ListedRow = { rank: number; item: string; score: number };

/**
 * Reads `window` of board `name` around each listed item (one neighbour a side) and by a lookup of
 * `ids` (board ranks), and expects both to match the model's listing `expected`.
 */
export async function expectAroundAndLookup(
  setup: { ranking: RankingService; lookup: LookupService },
  read: { name: string; window: string; ids: string[] },
  expected: ListedRow[],
): Promise<void> {
  const { name, window, ids } = read;
  for (const [i, row] of expected.entries()) {
    const around = await setup.ranking.around(name, window, row.item, 1);
    const want = expected.slice(Math.max(0, i - 1), i + 2);
    expect(around.items.map(({ rank, item }) => ({ rank, item }))).toEqual(
      want.map(({ rank, item }) => ({ rank, item })),
    );
  }
  const ranks = await setup.lookup.lookup({ name, window, items: ids, relative: false, withData: false });
  expect(ranks.items.map((row) => [row.item, row.rank])).toEqual(
    ids.map((id) => [id, expected.find((r) => r.item === id)?.rank ?? null]),
  );
}
