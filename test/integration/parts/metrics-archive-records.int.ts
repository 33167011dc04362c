import type { Cluster, Redis } from 'ioredis';
import { useRankingService } from '../../../harness/ranking';

const DAY_MS = 86_400_000;
const METRICS = ['up', 'down'];
const WINDOWS = [{ name: 'day', calendar: 'day', archive: { keep: 3, top: 3 } }];

describe.each([1, 3])('archive records of a board of several metrics (%i shard(s))', (shards) => {
  const setup = useRankingService('single');

  /** Every key of the test's prefix matching `pattern` (one node). */
  const keysLike = (pattern: string) => (setup.redis.client as Redis | Cluster as Redis).keys(pattern);

  /** A day of `up` and `down` counts on items a, b, c and d (b is `down`'s best), then the day closed. */
  async function day(name: string, bump: number): Promise<void> {
    for (const [m, metric] of METRICS.entries())
      await setup.ranking.incrementBatch(
        name,
        ['a', 'b', 'c', 'd'].map((item, i) => ({ item, amount: (m === 0 ? 4 - i : i === 1 ? 9 : 1) + bump, metric })),
      );
    setup.clock.advanceMs(DAY_MS);
  }

  it('answers the rows of archives kept before their records without metrics, and the newer ones with', async () => {
    const name = `records${shards}`;
    setup.clock.setMs(1_700_000_000_000);
    await setup.ranking.putBoard({ name, windows: WINDOWS, shards, metrics: METRICS });
    await day(name, 0);
    const first = await setup.ranking.archives(name, 'day', 10, undefined);
    expect(first.periods[0].items).toEqual([
      // down's archive is b, d, c (ties in descending id order): full without a.
      { rank: 1, item: 'a', score: 4, metrics: { up: 4 } },
      { rank: 2, item: 'b', score: 3, metrics: { up: 3, down: 9 } },
      { rank: 3, item: 'c', score: 2, metrics: { up: 2, down: 1 } },
    ]);
    // The archives as kept before records were: their texts alone.
    const records = await keysLike(`*${name}*archidx:*`);
    expect(records.length).toBeGreaterThanOrEqual(METRICS.length);
    await (setup.redis.client as Redis).del(...records);
    const before = await setup.ranking.archives(name, 'day', 10, undefined);
    expect(before.periods[0].items).toEqual(
      first.periods[0].items.map(({ rank, item, score }) => ({ rank, item, score })),
    );
    const byDown = await setup.ranking.archive(name, 'day', undefined, { offset: 0, limit: 3 }, { metric: 'down' });
    expect(byDown.items.every((row) => !('metrics' in row))).toBe(true);
    await day(name, 10);
    const both = await setup.ranking.archives(name, 'day', 10, undefined, {}, { metric: 'down' });
    expect(both.periods.map((period) => period.items.map((row) => row.metrics))).toEqual([
      [{ down: 19, up: 13 }, { down: 11 }, { down: 11, up: 12 }],
      [undefined, undefined, undefined],
    ]);
    await setup.ranking.deleteBoard(name);
  });
});

describe('archive records of a board of three metrics on 64 shards', () => {
  const setup = useRankingService('single');

  it("answers each row's other counts: every shard's rows ahead asked a node at a time, within the read's calls", async () => {
    const name = 'records64';
    const metrics = ['up', 'down', 'flag'];
    setup.clock.setMs(1_700_000_000_000);
    await setup.ranking.putBoard({ name, windows: WINDOWS, shards: 64, metrics });
    for (const [m, metric] of metrics.entries())
      await setup.ranking.incrementBatch(
        name,
        ['a', 'b', 'c', 'd'].map((item, i) => ({ item, amount: m === 0 ? 4 - i : m === 1 ? i + 1 : 5, metric })),
      );
    setup.clock.advanceMs(DAY_MS);
    // 2 other metrics x (3 rows' shards + 64 shards) = 134 calls one shard at a time: past the 128 a read takes.
    const page = await setup.ranking.archive(name, 'day', undefined, { offset: 0, limit: 3 }, { metric: 'up' });
    expect(page.items).toEqual([
      // down's archive is d, c, b: full without a; flag's ties b, c, d (descending ids) first: d, c, b.
      { rank: 1, item: 'a', score: 4, metrics: { up: 4 } },
      { rank: 2, item: 'b', score: 3, metrics: { up: 3, down: 2, flag: 5 } },
      { rank: 3, item: 'c', score: 2, metrics: { up: 2, down: 3, flag: 5 } },
    ]);
    await setup.ranking.deleteBoard(name);
  });
});
