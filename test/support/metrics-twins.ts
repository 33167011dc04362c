import type { RankingService } from '../../src/ranking/ranking.service';

/** Compares one read of two boards (the label names it in a failure). */
export type SameAnswer = (
  label: string,
  read: (board: string) => Promise<unknown>,
  name: string,
  other: string,
) => Promise<void>;

type Page = { items: Array<{ item: string; rank: number; previousRank?: number | null }> };
const ranks = (page: Promise<Page>) =>
  page.then(({ items }) => items.map(({ item, rank, previousRank }) => ({ item, rank, previousRank })));

/** A history listing without its rows' `metrics` (a board of one metric answers none; their counts: ranking.metrics-history). */
const withoutCounts = (answer: Promise<{ items: object[] }>) =>
  answer.then(({ items, ...listing }) => ({
    ...listing,
    items: items.map((row) => Object.fromEntries(Object.entries(row).filter(([field]) => field !== 'metrics'))),
  }));

/** An answer without any row's or point's `metrics` (archives and item histories; their counts: ranking.metrics-history). */
const withoutMetrics = (answer: Promise<object>) =>
  answer.then((found) =>
    JSON.parse(JSON.stringify(found, (field, value) => (field === 'metrics' ? undefined : value))),
  );

/**
 * A metrics board's history by `metric` against the board of that metric alone (window `w` keeping
 * snapshots, `day` archives): previous ranks, snapshots, archives and each item's history.
 */
export async function compareMetricHistory(
  ranking: RankingService,
  same: SameAnswer,
  boards: { name: string; alone: string; metric: string; items: readonly string[] },
): Promise<void> {
  const { name, alone, metric } = boards;
  const byMetric = (b: string) => (b === name ? metric : undefined);
  await same(`${metric} ranks`, (b) => ranks(ranking.top(b, 'w', 0, 10, { metric: byMetric(b) })), name, alone);
  await same(
    `${metric} history`,
    (b) => withoutCounts(ranking.history(b, 'w', undefined, undefined, byMetric(b))),
    name,
    alone,
  );
  await same(
    `${metric} archives`,
    (b) => withoutMetrics(ranking.archives(b, 'day', 10, undefined, {}, { metric: byMetric(b) })),
    name,
    alone,
  );
  for (const one of boards.items)
    await same(
      `${metric} history of ${one}`,
      (b) => withoutMetrics(ranking.itemHistory(b, 'w', one, undefined, undefined, undefined, byMetric(b))),
      name,
      alone,
    );
}
