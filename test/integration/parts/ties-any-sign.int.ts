import { useRankingService } from '../../../harness/ranking';
import { TOPOLOGIES } from '../../../harness/redis';

/**
 * `ties: first` on a max / min / last board lists every recorded score whatever its sign, as the
 * board does with shared ties: 0 and negative scores take strict ranks after the positive ones, in
 * the order they were reached, on every read (top, item, around, lookup), on 1 and 3 shards.
 */
const CASES = TOPOLOGIES.flatMap((topology) => [1, 3].map((shards) => [topology, shards] as const));
const WINDOWS = [{ name: 'w', period: 60, interval: 20 }];

describe.each(CASES)('ties: first with scores of any sign (%s, %i shard(s))', (topology, shards) => {
  const setup = useRankingService(topology);
  let board = 0;

  it.each(['max', 'last'] as const)('%s: every held score is listed with a strict rank', async (aggregate) => {
    const name = `any${board++}`;
    setup.clock.setMs(1_700_000_000_000);
    await setup.ranking.putBoard({ name, windows: WINDOWS, shards, aggregate, ties: 'first' });
    // Written in this order, 1 ms apart: among equal scores the earlier ranks higher (across shards too).
    const writes: Array<[string, number]> = [
      ['a', -3],
      ['b', 0],
      ['c', 2],
      ['d', 0],
      ['e', -3],
      ['f', -1],
    ];
    for (const [item, score] of writes) {
      await setup.ranking.score(name, item, score);
      setup.clock.advanceMs(1);
    }
    const expected = [
      ['c', 1, 2],
      ['b', 2, 0],
      ['d', 3, 0],
      ['f', 4, -1],
      ['a', 5, -3],
      ['e', 6, -3],
    ];
    const top = await setup.ranking.top(name, 'w', 0, 10);
    expect(top.items.map((row) => [row.item, row.rank, row.score])).toEqual(expected);
    for (const [i, [item, rank, score]] of expected.entries()) {
      const read = await setup.ranking.item(name, 'w', item as string);
      expect([item, read.rank, read.score]).toEqual([item, rank, score]);
      const around = await setup.ranking.around(name, 'w', item as string, 1);
      expect(around.items.map((row) => row.item)).toEqual(
        expected.slice(Math.max(0, i - 1), i + 2).map((row) => row[0]),
      );
    }
    const ids = expected.map((row) => row[0] as string);
    const looked = await setup.lookup.lookup({ name, window: 'w', items: ids, relative: false, withData: false });
    expect(looked.items.map((row) => [row.item, row.rank])).toEqual(expected.map((row) => [row[0], row[1]]));
    // Once the slot leaves the window the items leave the strict order too.
    setup.clock.advanceMs(80_000);
    expect((await setup.ranking.top(name, 'w', 0, 10)).items).toEqual([]);
    await setup.ranking.deleteBoard(name);
  });
});
