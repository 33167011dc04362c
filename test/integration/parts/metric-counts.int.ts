import { useRankingService } from '../../../harness/ranking';
import { METRIC_COUNTS_PER_CALL } from '../../../src/ranking/core/ranking.limits';

const METRICS = ['m1', 'm2', 'm3', 'm4', 'm5', 'm6', 'm7', 'm8'];
/** More items than one metric_counts call takes on a board of 8 metrics: the page's counts go in several. */
const ITEMS = Math.floor(METRIC_COUNTS_PER_CALL / METRICS.length) + 50;

describe.each([1, 3])('metric counts of a long page (%i shard(s))', (shards) => {
  const setup = useRankingService('single');

  it('answers every row every metric when the counts take several calls', async () => {
    const name = `counts${shards}`;
    await setup.ranking.putBoard({
      name,
      windows: [{ name: 'w', period: 3600, interval: 60 }],
      shards,
      metrics: METRICS,
    });
    for (const [m, metric] of METRICS.entries())
      await setup.ranking.incrementBatch(
        name,
        Array.from({ length: ITEMS }, (_, n) => ({ item: `i${n}`, amount: (ITEMS - n) * (m + 1), metric })),
      );
    const page = await setup.ranking.top(name, 'w', 0, ITEMS, { metric: 'm8' });
    expect(page.items).toHaveLength(ITEMS);
    const expected = (item: string) => {
      const n = Number(item.slice(1));
      return Object.fromEntries(METRICS.map((metric, m) => [metric, (ITEMS - n) * (m + 1)]));
    };
    expect(page.items.map((row) => [row.item, (row as { metrics?: object }).metrics])).toEqual(
      page.items.map((row) => [row.item, expected(row.item)]),
    );
  }, 120_000);
});
