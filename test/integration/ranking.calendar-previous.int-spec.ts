import { shardOf } from '../../src/ranking/core/shard-math';
import { useRankingService } from '../../harness/ranking';

const DAY_MS = 86_400_000;
const FIRST_DAY_MS = Date.parse('2031-03-01T00:00:00Z');
const SHARDS = 3;

/** The first id `prefix<n>` on each shard, by shard. */
function oneIdPerShard(prefix: string): string[] {
  const ids: string[] = [];
  for (let n = 0; ids.filter(Boolean).length < SHARDS; n++) {
    const shard = shardOf(`${prefix}${n}`, SHARDS);
    ids[shard] ??= `${prefix}${n}`;
  }
  return ids;
}

describe('previousRank of a sharded calendar window (single)', () => {
  const setup = useRankingService('single');
  const { clock } = setup;

  it("is each item's rank in the newest archive, though a shard scored nothing in that period", async () => {
    // "quiet" leads day 1 alone on its shard, which then scores nothing on day 2: its newest archive
    // stays day 1's, which the board's newest archive (day 2) does not list.
    const [quiet, steady, other] = oneIdPerShard('p');
    await setup.ranking.putBoard({
      name: 'prevDays',
      windows: [{ name: 'day', calendar: 'day', archive: { keep: 3, top: 10 } }],
      shards: SHARDS,
    });
    clock.setMs(FIRST_DAY_MS + 3_600_000);
    await setup.ranking.increment('prevDays', quiet, 100);
    await setup.ranking.increment('prevDays', steady, 2);
    await setup.ranking.increment('prevDays', other, 1);
    clock.setMs(FIRST_DAY_MS + DAY_MS + 3_600_000);
    await setup.ranking.increment('prevDays', steady, 3);
    await setup.ranking.increment('prevDays', other, 5);
    clock.setMs(FIRST_DAY_MS + 2 * DAY_MS + 3_600_000);
    for (const item of [quiet, steady, other]) await setup.ranking.increment('prevDays', item, 1);

    const archives = await setup.ranking.archives('prevDays', 'day', 1, undefined);
    expect(archives.periods).toMatchObject([
      {
        from: (FIRST_DAY_MS + DAY_MS) / 1000,
        items: [
          { rank: 1, item: other, score: 5 },
          { rank: 2, item: steady, score: 3 },
        ],
      },
    ]);
    const expected = { [other]: 1, [steady]: 2, [quiet]: null };
    const top = await setup.ranking.top('prevDays', 'day', 0, 10);
    expect(Object.fromEntries(top.items.map((row) => [row.item, row.previousRank]))).toEqual(expected);
    const looked = await setup.lookup.lookup({
      name: 'prevDays',
      window: 'day',
      items: [quiet, steady, other],
      relative: false,
      withData: false,
    });
    expect(Object.fromEntries(looked.items.map((row) => [row.item, row.previousRank]))).toEqual(expected);
  });

  it('follows the period end, not a slot of the longest period (25 h for a day)', async () => {
    // 2031-03-01 00:00 UTC lies 11 h into a 90 000 s slot: an hour before and after it share that slot.
    const endMs = FIRST_DAY_MS;
    expect(Math.floor((endMs - 3_600_000) / 90_000_000)).toBe(Math.floor((endMs + 3_600_000) / 90_000_000));
    const [early, late] = oneIdPerShard('e');
    await setup.ranking.putBoard({
      name: 'endDays',
      windows: [{ name: 'day', calendar: 'day', archive: { keep: 3, top: 10 } }],
      shards: SHARDS,
    });
    const items = [early, late];
    const previousRanks = async () => {
      const looked = await setup.lookup.lookup({
        name: 'endDays',
        window: 'day',
        items,
        relative: false,
        withData: false,
      });
      return Object.fromEntries(looked.items.map((row) => [row.item, row.previousRank]));
    };
    clock.setMs(endMs - 2 * DAY_MS + 3_600_000);
    await setup.ranking.increment('endDays', early, 5);
    clock.setMs(endMs - DAY_MS + 3_600_000);
    await setup.ranking.increment('endDays', late, 7);
    clock.setMs(endMs - 3_600_000);
    await setup.ranking.top('endDays', 'day', 0, 10);
    expect(await previousRanks()).toEqual({ [early]: 1, [late]: null });
    clock.setMs(endMs + 3_600_000);
    await setup.ranking.top('endDays', 'day', 0, 10);
    expect(await previousRanks()).toEqual({ [early]: null, [late]: 1 });
  });
});

describe('previousRank of a sharded calendar window while a shard writes out its archive (single)', () => {
  const setup = useRankingService('single', { EXPIRE_CHUNK: '2' });
  const { clock } = setup;

  it('answers the newest archive every shard has written, and the newer one once written', async () => {
    const [quiet, steady, other] = oneIdPerShard('w');
    // Day 2's rows: one on other's shard (archived by the first call of day 3 there), four on steady's
    // (2 fields a call: several calls), none on quiet's.
    const fillers = Array.from({ length: 60 }, (_, n) => `f${n}`)
      .filter((id) => shardOf(id, SHARDS) === shardOf(steady, SHARDS))
      .slice(0, 3);
    await setup.ranking.putBoard({
      name: 'drainDays',
      windows: [{ name: 'day', calendar: 'day', archive: { keep: 3, top: 20 } }],
      shards: SHARDS,
    });
    clock.setMs(FIRST_DAY_MS + 3_600_000);
    await setup.ranking.increment('drainDays', quiet, 100);
    await setup.ranking.increment('drainDays', steady, 2);
    await setup.ranking.increment('drainDays', other, 1);
    clock.setMs(FIRST_DAY_MS + DAY_MS + 3_600_000);
    await setup.ranking.increment('drainDays', steady, 3);
    await setup.ranking.increment('drainDays', other, 5);
    for (const [n, id] of fillers.entries()) await setup.ranking.increment('drainDays', id, 10 + n);
    clock.setMs(FIRST_DAY_MS + 2 * DAY_MS + 3_600_000);
    const previousRanks = async () => {
      const items = [quiet, steady, other];
      const looked = await setup.lookup.lookup({
        name: 'drainDays',
        window: 'day',
        items,
        relative: false,
        withData: false,
      });
      return Object.fromEntries(looked.items.map((row) => [row.item, row.previousRank]));
    };

    await setup.ranking.increment('drainDays', other, 1);
    // Other's shard has written day 2's archive, steady's has not: day 1's is the newest every shard wrote.
    expect(await previousRanks()).toEqual({ [quiet]: 1, [steady]: 2, [other]: 3 });
    await setup.ranking.top('drainDays', 'day', 0, 10);
    const archives = await setup.ranking.archives('drainDays', 'day', 1, undefined);
    expect(archives.periods[0]).toMatchObject({ from: (FIRST_DAY_MS + DAY_MS) / 1000 });
    const ranks = new Map(archives.periods[0].items.map((row) => [row.item, row.rank]));
    expect(await previousRanks()).toEqual({ [quiet]: null, [steady]: ranks.get(steady), [other]: ranks.get(other) });
    expect(ranks.get(other)).toBe(4);
  });
});
