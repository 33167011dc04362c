import { RankingKeys } from '../../../src/ranking/core/ranking.keys';
import { shardOf } from '../../../src/ranking/core/shard-math';
import { useRankingService } from '../../../harness/ranking';

/** February 2028 in New York: a leap month, from 05:00 UTC on the 1st to 05:00 UTC on March 1st. */
const FEB_START_MS = Date.parse('2028-02-01T05:00:00Z');
const MAR_START_MS = Date.parse('2028-03-01T05:00:00Z');
const ITEMS = 1200;
const CHUNK = 500;

describe('a calendar window at its period end, with nobody reading (single)', () => {
  const setup = useRankingService('single', { EXPIRE_CHUNK: String(CHUNK) });
  const { clock } = setup;

  it('the due index wakes the scheduler at the local month end; it archives once and drains the period (EXPIRE_CHUNK fields a call)', async () => {
    clock.setMs(FEB_START_MS + 86_400_000);
    await setup.ranking.putBoard({
      name: 'feb',
      windows: [{ name: 'month', calendar: 'month', timeZone: 'America/New_York', archive: { keep: 2, top: 3 } }],
    });
    const entries = Array.from({ length: ITEMS }, (_, i) => ({ item: `i${i}`, amount: i + 1 }));
    for (let i = 0; i < entries.length; i += 1000)
      await setup.ranking.incrementBatch('feb', entries.slice(i, i + 1000));
    const due = await setup.ranking.expireDue({ leaseMs: 30_000, claimBatch: 10 });
    expect(due.visited).toBe(0);

    // The leap day still counts; the scheduler's first visit is at March 1st 00:00 in New York.
    clock.setMs(MAR_START_MS - 1000);
    expect((await setup.ranking.item('feb', 'month', 'i0')).score).toBe(1);
    clock.setMs(MAR_START_MS);
    let passes = 0;
    while ((await setup.ranking.expireDue({ leaseMs: 30_000, claimBatch: 10 })).visited > 0) passes++;
    expect(passes).toBeGreaterThanOrEqual(1);
    const board = new RankingKeys(setup.redis.prefix).board('feb');
    expect(await setup.redis.client.exists(board.top('month'), board.slots('month'))).toBe(0);

    const archives = await setup.ranking.archives('feb', 'month', 10, undefined);
    expect(archives.periods).toEqual([
      {
        from: FEB_START_MS / 1000,
        to: MAR_START_MS / 1000,
        items: [
          { rank: 1, item: `i${ITEMS - 1}`, score: ITEMS },
          { rank: 2, item: `i${ITEMS - 2}`, score: ITEMS - 1 },
          { rank: 3, item: `i${ITEMS - 3}`, score: ITEMS - 2 },
        ],
        nextOffset: null,
      },
    ]);
    const top = await setup.ranking.top('feb', 'month', 0, 10);
    expect(top).toMatchObject({ from: MAR_START_MS / 1000, items: [] });
  });
});

describe('archives of a sharded calendar window (single)', () => {
  const setup = useRankingService('single');
  const { clock } = setup;
  const DAY_MS = 86_400_000;
  const FIRST_DAY_MS = Date.parse('2030-01-01T00:00:00Z');

  it('keeps the newest `keep` periods of the board, though a shard that went quiet still holds older ones', async () => {
    // Each shard keeps the newest `keep` periods it scored in: "quiet"'s shard keeps day 1 long after
    // the board dropped it (SHARD_WENT_QUIET of the property test, with days for weeks).
    expect(shardOf('quiet', 3)).not.toBe(shardOf('steady', 3));
    await setup.ranking.putBoard({
      name: 'shardedDays',
      windows: [{ name: 'day', calendar: 'day', archive: { keep: 2, top: 3 } }],
      shards: 3,
    });
    for (let day = 0; day < 4; day++) {
      clock.setMs(FIRST_DAY_MS + day * DAY_MS + 3_600_000);
      await setup.ranking.top('shardedDays', 'day', 0, 10);
      if (day === 0) await setup.ranking.increment('shardedDays', 'quiet', 5);
      if (day < 3) await setup.ranking.increment('shardedDays', 'steady', day + 1);
    }
    const page = await setup.ranking.archives('shardedDays', 'day', 10, undefined);
    expect(page.periods).toEqual([
      {
        from: (FIRST_DAY_MS + 2 * DAY_MS) / 1000,
        to: (FIRST_DAY_MS + 3 * DAY_MS) / 1000,
        items: [{ rank: 1, item: 'steady', score: 3 }],
        nextOffset: null,
      },
      {
        from: (FIRST_DAY_MS + DAY_MS) / 1000,
        to: (FIRST_DAY_MS + 2 * DAY_MS) / 1000,
        items: [{ rank: 1, item: 'steady', score: 2 }],
        nextOffset: null,
      },
    ]);
    const byCursor = await setup.ranking.archives('shardedDays', 'day', 1, page.periods[1].from);
    expect(byCursor.periods).toEqual([]);
  });
});
