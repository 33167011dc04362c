import { useRankingService } from '../../../harness/ranking';
import { TOPOLOGIES } from '../../../harness/redis';

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;
const DAY0_MS = Date.parse('2030-01-01T00:00:00Z') + 3_600_000;
/** Race times, any sign: the lowest three are b, c, e. */
const SCORES: Array<[string, number]> = [
  ['a', 5],
  ['b', -2],
  ['c', 0],
  ['d', 7],
  ['e', 3],
  ['f', 3],
];
const BEST = [
  { rank: 1, item: 'b', score: -2 },
  { rank: 2, item: 'c', score: 0 },
  { rank: 3, item: 'e', score: 3 },
];

const CASES = TOPOLOGIES.flatMap((topology) => [1, 3].map((shards) => [topology, shards] as const));

describe.each(CASES)('order: asc history and archives (%s, %i shard(s))', (topology, shards) => {
  const setup = useRankingService(topology);
  const { clock } = setup;
  let board = 0;

  it('snapshots, item history, previous ranks and archives keep the lowest scores first', async () => {
    const name = `oh${board++}`;
    clock.setMs(DAY0_MS);
    await setup.ranking.putBoard({
      name,
      shards,
      aggregate: 'min',
      order: 'asc',
      windows: [
        { name: 'm', period: 180, interval: 60, snapshots: { keep: 3, top: 3 } },
        { name: 'day', calendar: 'day', archive: { keep: 2, top: 3 } },
      ],
    });
    await setup.ranking.top(name, 'm', 0, 1); // marks the slot: the next minute's first call snapshots it
    for (const [item, score] of SCORES) await setup.ranking.score(name, item, score);
    clock.advanceMs(MINUTE_MS);

    const history = await setup.ranking.history(name, 'm', undefined);
    // e and f tie at 3: the snapshot keeps the first 3 in the board order (ids ascending on asc).
    expect(history.items.map(({ rank, item, score }) => ({ rank, item, score }))).toEqual(BEST);
    const top = await setup.ranking.top(name, 'm', 0, 4);
    expect(top.items.map((row) => [row.item, row.rank, row.previousRank])).toEqual([
      ['b', 1, 1],
      ['c', 2, 2],
      ['e', 3, 3],
      ['f', 3, null],
    ]);
    for (const [item, rank] of [
      ['b', 1],
      ['e', 3],
      ['a', null],
    ] as const) {
      const { points } = await setup.ranking.itemHistory(name, 'm', item, undefined, undefined);
      expect([item, points.map((point) => point.rank)]).toEqual([item, [rank]]);
    }

    clock.advanceMs(DAY_MS);
    await setup.ranking.top(name, 'day', 0, 1);
    const archives = await setup.ranking.archives(name, 'day', 10, undefined);
    expect(archives.periods.map((period) => period.items)).toEqual([
      [...BEST.slice(0, 2), { rank: 3, item: 'e', score: 3 }],
    ]);
    await setup.ranking.deleteBoard(name);
  });
});
