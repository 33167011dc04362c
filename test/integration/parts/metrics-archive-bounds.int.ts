import { DomainError } from '../../../src/common/errors';
import { FakeClock } from '../../../harness/clock';
import { useOwnServerRanking, useRankingService } from '../../../harness/ranking';
import { loggedCalls, logEveryCommand, stopLoggingEveryCommand } from '../../support/slowlog';
import { TOPOLOGIES } from '../../../harness/redis';
import { LISTING_SHARDS_PER_CALL, LISTING_UNITS_PER_CALL } from '../../../src/ranking/core/ranking.limits';
import { HistoryStore } from '../../../src/ranking/history/history.store';
import { listingUnits } from '../../../src/ranking/history/listing-counts';

const DAY_MS = 86_400_000;
/** Fields or rows an expiry call drains: a period of 240 items takes more calls than one read makes. */
const CHUNK = 10;

/** A read's error code, or 'ok'. */
const code = (read: Promise<unknown>) => read.then(() => 'ok').catch((error: DomainError) => error.code);

/**
 * An item history by one metric while another metric's archive of the same period is still being
 * written (archive_lib: in chunks, over later calls) answers that metric's count once written, and a
 * 503 WINDOW_DRAINING until then: never the point without it.
 */
describe.each(TOPOLOGIES.flatMap((t) => [1, 3].map((shards) => [t, shards] as const)))(
  "metrics: an item history while another metric's archive is written (%s, %i shard(s))",
  (topology, shards) => {
    const setup = useRankingService(topology, { EXPIRE_CHUNK: String(CHUNK) });
    const windows = [{ name: 'day', calendar: 'day', archive: { keep: 3, top: 3 } }];

    it('answers the other metric once its archive is written, 503 WINDOW_DRAINING before', async () => {
      const name = `drain${shards}`;
      setup.clock.setMs(1_700_000_000_000);
      await setup.ranking.putBoard({ name, windows, shards, metrics: ['up', 'down'] });
      await setup.ranking.incrementBatch(name, [{ item: 'a', amount: 4, metric: 'up' }]);
      const many = Array.from({ length: 240 }, (_, i) => ({ item: `i${i}`, amount: 1 + (i % 7), metric: 'down' }));
      await setup.ranking.incrementBatch(name, [{ item: 'a', amount: 9, metric: 'down' }, ...many]);
      setup.clock.advanceMs(DAY_MS);
      // up's archive (one item) is written by a write of up alone; down's, 241 fields, takes many calls.
      await setup.ranking.incrementBatch(name, [{ item: 'b', amount: 1, metric: 'up' }]);
      const history = () => setup.ranking.itemHistory(name, 'day', 'a', undefined, undefined, undefined, 'up');
      expect(await code(history())).toBe('WINDOW_DRAINING');
      let reads = 0;
      while ((await code(setup.ranking.archives(name, 'day', 1, undefined, {}, { metric: 'down' }))) !== 'ok') {
        expect(++reads).toBeLessThan(100);
      }
      const { points } = await history();
      expect(points.map(({ rank, score, metrics }) => ({ rank, score, metrics }))).toEqual([
        { rank: 1, score: 4, metrics: { up: 4, down: 9 } },
      ]);
      await setup.ranking.deleteBoard(name);
    });

    it('answers the other metric of a history read that is first to meet its closed period', async () => {
      const name = `first${shards}`;
      setup.clock.setMs(1_700_000_000_000);
      await setup.ranking.putBoard({ name, windows, shards, metrics: ['up', 'down'] });
      for (const metric of ['up', 'down'])
        await setup.ranking.incrementBatch(name, [{ item: 'a', amount: metric === 'up' ? 2 : 5, metric }]);
      setup.clock.advanceMs(DAY_MS);
      await setup.ranking.incrementBatch(name, [{ item: 'b', amount: 1, metric: 'up' }]);
      // down's closed period is met first here: written in the read's calls, then answered.
      const { points } = await setup.ranking.itemHistory(name, 'day', 'a', undefined, undefined, undefined, 'up');
      expect(points.map(({ metrics }) => metrics)).toEqual([{ up: 2, down: 5 }]);
      await setup.ranking.deleteBoard(name);
    });
  },
);

/**
 * An archive page of a board of 3 metrics on 64 shards whose rows' counts would take more than a
 * read's bound answers the first rows whose counts fit, every row with its `metrics`, and where the
 * rest go on (`nextOffset`, and `nextCursor` past a period it leaves out).
 */
describe.each(TOPOLOGIES)('metrics: an archive page past the read bound of its counts (%s, 64 shards)', (topology) => {
  const setup = useRankingService(topology);
  const ROWS = 40;
  const metrics = ['up', 'down', 'flag'];
  /** Every item's counts: all 40 rows kept by every metric's archive. */
  const countsOf = (i: number) => ({ up: 100 - i, down: i + 1, flag: 5 });

  it('cuts the page to the rows whose counts fit and answers every one of them with metrics', async () => {
    const name = 'bound64';
    setup.clock.setMs(1_700_000_000_000);
    const windows = [{ name: 'day', calendar: 'day', archive: { keep: 3, top: ROWS } }];
    await setup.ranking.putBoard({ name, windows, shards: 64, metrics });
    for (let day = 0; day < 2; day++) {
      for (const metric of metrics) {
        const entries = Array.from({ length: ROWS }, (_, i) => ({ item: `i${i}`, metric }));
        await setup.ranking.incrementBatch(
          name,
          entries.map((entry, i) => ({ ...entry, amount: countsOf(i)[metric as 'up'] })),
        );
      }
      setup.clock.advanceMs(DAY_MS);
    }
    const all = Array.from({ length: ROWS }, (_, i) => ({
      rank: i + 1,
      item: `i${i}`,
      score: 100 - i,
      metrics: countsOf(i),
    }));
    const rows: unknown[] = [];
    for (let offset: number | null = 0; offset !== null;) {
      const page = await setup.ranking.archive(name, 'day', undefined, { offset, limit: ROWS }, { metric: 'up' });
      expect(page.items.length).toBeGreaterThan(0);
      expect(page.items.length).toBeLessThan(ROWS);
      rows.push(...page.items);
      offset = page.nextOffset;
    }
    expect(rows).toEqual(all);
    // Two periods of 40 rows: the newest cut, the older left for the next page.
    const shardCalls = jest.spyOn(HistoryStore.prototype, 'listingCountsShards');
    const first = await setup.ranking.archives(name, 'day', 10, undefined, {}, { metric: 'up' });
    const shardsRead = shardCalls.mock.calls.map(([, , , shards]) => shards.length);
    shardCalls.mockRestore();
    // Each call reads at most LISTING_SHARDS_PER_CALL shards, whatever their units.
    expect(shardsRead.length).toBeGreaterThan(0);
    expect(Math.max(...shardsRead)).toBeLessThanOrEqual(LISTING_SHARDS_PER_CALL);
    expect(first.periods).toHaveLength(1);
    expect(first.periods[0].items).toEqual(all.slice(0, first.periods[0].items.length));
    expect(first.periods[0].nextOffset).toBe(first.periods[0].items.length);
    expect(first.nextCursor).toBe(first.periods[0].from);
    const second = await setup.ranking.archives(name, 'day', 10, first.nextCursor!, {}, { metric: 'up' });
    expect(second.periods.map((period) => period.to)).toEqual([first.periods[0].from]);
    expect(second.periods[0].items).toEqual(all.slice(0, second.periods[0].items.length));
    await setup.ranking.deleteBoard(name);
  });
});

/**
 * A one-shard board's archive page of more rows than one listing_counts call weighs: each other
 * metric's record lookups go in calls of at most LISTING_UNITS_PER_CALL units (listing-counts.ts
 * askPieces), not one call of every row, and every row keeps its counts.
 */
describe.each(TOPOLOGIES)('metrics: a one-shard archive page of many rows (%s)', (topology) => {
  const setup = useRankingService(topology);
  const ROWS = 1000;
  const metrics = ['up', 'down'];

  it('asks the records in calls of at most LISTING_UNITS_PER_CALL units', async () => {
    const name = 'many1';
    setup.clock.setMs(1_700_000_000_000);
    const windows = [{ name: 'day', calendar: 'day', archive: { keep: 3, top: ROWS } }];
    await setup.ranking.putBoard({ name, windows, metrics });
    for (const metric of metrics)
      for (let first = 0; first < ROWS; first += 200) {
        const entries = Array.from({ length: 200 }, (_, k) => ({ item: `i${first + k}`, metric }));
        await setup.ranking.incrementBatch(
          name,
          entries.map((entry, k) => ({ ...entry, amount: metric === 'up' ? ROWS - first - k : first + k + 1 })),
        );
      }
    setup.clock.advanceMs(DAY_MS);
    while ((await code(setup.ranking.archives(name, 'day', 1, undefined, {}, { metric: 'down' }))) !== 'ok');
    const calls = jest.spyOn(HistoryStore.prototype, 'listingCounts');
    try {
      let page = await code(
        setup.ranking.archive(name, 'day', undefined, { offset: 0, limit: ROWS }, { metric: 'up' }),
      );
      for (let read = 0; page === 'WINDOW_DRAINING' && read < 20; read++)
        page = await code(setup.ranking.archive(name, 'day', undefined, { offset: 0, limit: ROWS }, { metric: 'up' }));
      expect(page).toBe('ok');
      const units = calls.mock.calls.map(([, , , , asked]) => listingUnits(asked));
      expect(Math.max(...units)).toBeLessThanOrEqual(LISTING_UNITS_PER_CALL);
      expect(units.reduce((sum, n) => sum + n, 0)).toBeGreaterThanOrEqual(ROWS);
    } finally {
      calls.mockRestore();
    }
    const { items } = await setup.ranking.archive(name, 'day', undefined, { offset: 0, limit: ROWS }, { metric: 'up' });
    expect(items.map(({ item, metrics: counts }) => [item, counts])).toEqual(
      Array.from({ length: ROWS }, (_, i) => [`i${i}`, { up: ROWS - i, down: i + 1 }]),
    );
    await setup.ranking.deleteBoard(name);
  });
});

/**
 * A one-shard board's record lookups for an archive page's `metrics` read each listing's row count from
 * its text's last bytes (GETRANGE), never its whole text (GET): a 10 000-row period's text is ~200 KB a
 * call, where a lookup of a few hundred items needs none of it. Counted from the server's SLOWLOG.
 */
describe('metrics: record lookups without the listing text (single, one shard)', () => {
  const clock = new FakeClock(1_700_000_000_000);
  const started = useOwnServerRanking(clock);
  const ROWS = 50;

  it('runs no GET of a text in its listing_counts calls', async () => {
    const { ranking, node } = started();
    const windows = [{ name: 'day', calendar: 'day', archive: { keep: 3, top: ROWS } }];
    await ranking.putBoard({ name: 'tail1', windows, metrics: ['up', 'down'] });
    for (const metric of ['up', 'down'])
      await ranking.incrementBatch(
        'tail1',
        Array.from({ length: ROWS }, (_, i) => ({ item: `i${i}`, amount: i + 1, metric })),
      );
    clock.advanceMs(DAY_MS);
    for (const metric of ['up', 'down'])
      while ((await code(ranking.archives('tail1', 'day', 1, undefined, {}, { metric }))) !== 'ok');
    await logEveryCommand(node);
    const { items } = await ranking.archive('tail1', 'day', undefined, { offset: 0, limit: ROWS }, { metric: 'up' });
    const calls = (await loggedCalls(node)).filter(({ call }) => /_listing_counts$/.test(String(call[1])));
    await stopLoggingEveryCommand(node);
    expect(items.map((row) => row.metrics)).toEqual(
      Array.from({ length: ROWS }, (_, i) => ({ up: ROWS - i, down: ROWS - i })),
    );
    expect(calls.length).toBeGreaterThan(0);
    const commands = calls.flatMap(({ commands: run }) => run.map(([name]) => name.toUpperCase()));
    expect(commands).toContain('GETRANGE');
    expect(commands).not.toContain('GET');
  });
});

/**
 * An archive read's other metrics' counts on a Redis Cluster: the store sends each node's shards in
 * calls of their own (listing-counts.ts listingCountsOf, at most LISTING_SHARDS_PER_CALL shards a call),
 * and the read is charged those calls (metric-counts.ts metricCalls), not as many as one node serving
 * every shard would take: that charged up to a call less per node beyond the first, per metric.
 */
describe('metrics: the calls an archive read is charged for its counts (cluster, 64 shards)', () => {
  const setup = useRankingService('cluster');
  const ROWS = 20;
  const metrics = ['up', 'down', 'flag'];

  it('charges at least the listing calls the read sends', async () => {
    const name = 'charged64';
    setup.clock.setMs(1_700_000_000_000);
    const windows = [{ name: 'day', calendar: 'day', archive: { keep: 3, top: ROWS } }];
    await setup.ranking.putBoard({ name, windows, shards: 64, metrics });
    for (const metric of metrics)
      await setup.ranking.incrementBatch(
        name,
        Array.from({ length: ROWS }, (_, i) => ({ item: `i${i}`, metric, amount: i + 1 })),
      );
    setup.clock.advanceMs(DAY_MS);
    for (const metric of metrics)
      while ((await code(setup.ranking.archives(name, 'day', 1, undefined, {}, { metric }))) !== 'ok');
    const sent = [
      jest.spyOn(HistoryStore.prototype, 'listingCountsShards'),
      jest.spyOn(HistoryStore.prototype, 'listingCounts'),
    ];
    let charged = 0;
    const admit = (reads: number) => (charged += reads);
    const page = await setup.ranking.archive(
      name,
      'day',
      undefined,
      { offset: 0, limit: ROWS },
      { metric: 'up', admit },
    );
    const calls = sent.reduce((sum, spy) => sum + spy.mock.calls.length, 0);
    sent.forEach((spy) => spy.mockRestore());
    expect(page.items.every((row) => row.metrics !== undefined)).toBe(true);
    // Before: 22 calls charged of the 28 sent (the 3 nodes' shards in calls of their own).
    expect(calls).toBeGreaterThan(0);
    expect(charged).toBeGreaterThanOrEqual(calls);
    await setup.ranking.deleteBoard(name);
  });
});
