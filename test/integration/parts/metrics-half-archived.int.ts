import { FakeClock } from '../../../harness/clock';
import { TOPOLOGIES } from '../../../harness/redis';
import { DomainError } from '../../../src/common/errors';
import type { PreparedBoard } from '../../../src/ranking/core/board';
import { HistoryStore } from '../../../src/ranking/history/history.store';
import { useRankingGraph } from '../../support/ranking-graph';

const T0 = 1_700_000_000_000;
const DAY_MS = 86_400_000;
/** Fields or rows an expiry call drains: a shard's period of 60 items takes more calls than one read makes. */
const CHUNK = 2;
/** Calls that archive one shard's period of a few items (each drains CHUNK fields or rows). */
const MOST_ARCHIVE_CALLS = 100;
const windows = [{ name: 'day', calendar: 'day', archive: { keep: 3, top: 3 } }];

/** A read's error code, or 'ok'. */
const code = (read: Promise<unknown>) => read.then(() => 'ok').catch((error: DomainError) => error.code);

/**
 * An item history of the ranked metric of a sharded calendar board while a period is archived on the
 * item's own shard and not yet on another (archiving runs shard by shard, in chunks): the other
 * shard's rows of that period still sit in its live slot, so the point's rank is either exact (the
 * read archives the rest first) or a 503 WINDOW_DRAINING, never the item's shard's rank alone. The
 * archive pages of the same state answer every shard's rows. A shard that scored nothing in the
 * period counts none of its older period's rows ahead.
 */
describe.each(TOPOLOGIES)(
  'metrics: an item history of a period archived on some shards only (%s, 3 shards)',
  (topology) => {
    const clock = new FakeClock(T0);
    const world = useRankingGraph(topology, clock, { EXPIRE_CHUNK: String(CHUNK) });
    const history = (name: string, item: string) =>
      world.graph.ranking.itemHistory(name, 'day', item, undefined, undefined, undefined, 'up');

    /** The board's `up` metric as its reads see it. */
    const upBoard = (name: string) => world.graph.cache.withBoard(name, (board) => Promise.resolve(board.metric('up')));

    /** Items on other shards than `item`'s, `count` of them. */
    function elsewhere(board: PreparedBoard, item: string, count: number): string[] {
      const home = board.shardOf(item);
      const found: string[] = [];
      for (let i = 0; found.length < count; i++) if (board.shardOf(`x${i}`) !== home) found.push(`x${i}`);
      return found;
    }

    /** Archives the closed period of `item`'s shard alone: listing_counts on that shard until it drained. */
    async function archiveShardOf(board: PreparedBoard, item: string): Promise<void> {
      const store = world.graph.module.get(HistoryStore);
      const window = board.window('day')!;
      for (let calls = 1; ; calls++) {
        const { draining } = await store.listingCounts(board, window, clock.nowMs(), board.shardOf(item), []);
        if (!draining) return;
        expect(calls).toBeLessThan(MOST_ARCHIVE_CALLS);
      }
    }

    /** The period's rows over every shard by `up`, each with its metrics (read until its archive is written). */
    async function archivedRows(name: string) {
      for (let reads = 1; ; reads++) {
        const answer = world.graph.ranking.archive(name, 'day', undefined, { offset: 0, limit: 3 }, { metric: 'up' });
        if ((await code(answer)) === 'ok') return (await answer).items;
        expect(reads).toBeLessThan(MOST_ARCHIVE_CALLS);
      }
    }

    it('ranks the item among every shard of a period archived on its own shard only', async () => {
      const name = 'half';
      clock.setMs(T0);
      await world.graph.ranking.putBoard({ name, windows, shards: 3, metrics: ['up', 'down'] });
      const board = await upBoard(name);
      const [x] = elsewhere(board, 'a', 1);
      await world.graph.ranking.incrementBatch(name, [
        { item: 'a', amount: 4, metric: 'up' },
        { item: x, amount: 9, metric: 'up' },
      ]);
      await world.graph.ranking.incrementBatch(name, [{ item: 'a', amount: 2, metric: 'down' }]);
      clock.advanceMs(DAY_MS);
      await archiveShardOf(board, 'a');
      await archiveShardOf(await world.graph.cache.withBoard(name, (b) => Promise.resolve(b.metric('down'))), 'a');
      const { points } = await history(name, 'a');
      expect(points.map(({ rank, score, metrics }) => ({ rank, score, metrics }))).toEqual([
        { rank: 2, score: 4, metrics: { up: 4, down: 2 } },
      ]);
      expect(await archivedRows(name)).toEqual([
        { rank: 1, item: x, score: 9, metrics: { up: 9, down: 0 } },
        { rank: 2, item: 'a', score: 4, metrics: { up: 4, down: 2 } },
      ]);
      await world.graph.ranking.deleteBoard(name);
    });

    it('answers 503 WINDOW_DRAINING while another shard holds more of the period than a read drains', async () => {
      const name = 'many';
      clock.setMs(T0);
      await world.graph.ranking.putBoard({ name, windows, shards: 3, metrics: ['up', 'down'] });
      const board = await upBoard(name);
      const others = elsewhere(board, 'a', 60);
      await world.graph.ranking.incrementBatch(name, [
        { item: 'a', amount: 50, metric: 'up' },
        ...others.map((item, i) => ({ item, amount: 100 - i, metric: 'up' })),
      ]);
      clock.advanceMs(DAY_MS);
      await archiveShardOf(board, 'a');
      expect(await code(history(name, 'a'))).toBe('WINDOW_DRAINING');
      const rows = await archivedRows(name);
      expect(rows.map(({ item, score }) => ({ item, score }))).toEqual(
        others.slice(0, 3).map((item, i) => ({ item, score: 100 - i })),
      );
      const { points } = await history(name, 'a');
      expect(points.map(({ rank, score }) => ({ rank, score }))).toEqual([{ rank: null, score: null }]);
      await world.graph.ranking.deleteBoard(name);
    });

    it("counts no rows of another shard's older period at a period that shard scored nothing in", async () => {
      const name = 'older';
      clock.setMs(T0);
      await world.graph.ranking.putBoard({ name, windows, shards: 3, metrics: ['up', 'down'] });
      const board = await upBoard(name);
      const [x] = elsewhere(board, 'a', 1);
      await world.graph.ranking.incrementBatch(name, [
        { item: 'a', amount: 1, metric: 'up' },
        { item: x, amount: 9, metric: 'up' },
      ]);
      clock.advanceMs(DAY_MS);
      await world.graph.ranking.incrementBatch(name, [{ item: 'a', amount: 2, metric: 'up' }]);
      clock.advanceMs(DAY_MS);
      await archivedRows(name);
      const { points } = await history(name, 'a');
      expect(points.map(({ rank, score }) => ({ rank, score }))).toEqual([
        { rank: 2, score: 1 },
        { rank: 1, score: 2 },
      ]);
      await world.graph.ranking.deleteBoard(name);
    });
  },
);
