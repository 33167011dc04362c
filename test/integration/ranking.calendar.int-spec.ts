import { RankingKeys } from '../../src/ranking/core/ranking.keys';
import { useRankingService } from '../support/ranking';

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
    await setup.ranking.putBoard('feb', [
      { name: 'month', calendar: 'month', timeZone: 'America/New_York', archive: { keep: 2, top: 3 } },
    ]);
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
      },
    ]);
    const top = await setup.ranking.top('feb', 'month', 0, 10);
    expect(top).toMatchObject({ from: MAR_START_MS / 1000, items: [] });
  });
});
