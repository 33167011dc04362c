import { useRankingService } from '../../../harness/ranking';
import { RequestTooCostlyError } from '../../../src/common/errors';
import { validateConfig } from '../../../src/common/config';
import { entryCost } from '../../../src/ranking/core/write-cost';
import { LEAGUE_PLACEMENT_WRITE_COST } from '../../../src/ranking/options/leagues/leagues.limits';

/**
 * A leagues board's batch weighs each entry's placement in its cohort (issue #45): a call of 360 new
 * items on one shard of a calendar week with `ties: first` ran 7.2-8.0 ms (the window alone 3.0 ms) and
 * was within WRITE_COST_PER_CALL at 5 units an entry; now an entry weighs 10 and such a batch is refused,
 * nothing applied, naming the 180 it may carry.
 */
const BOUND = validateConfig({}).WRITE_COST_PER_CALL;
const LEAGUES = { window: 'week', size: 1000, tiers: ['t1', 't2'], promote: 10, relegate: 10 };
const BOARD = { windows: [{ name: 'week', calendar: 'week' as const }], ties: 'first' as const, leagues: LEAGUES };

describe('the cost of a leagues batch (single)', () => {
  const service = useRankingService('single');
  const newItems = (count: number) => Array.from({ length: count }, (_, n) => ({ item: `n${n}`, amount: n + 1 }));

  it('weighs each placement, so one call carries at most the entries the bound takes', async () => {
    const { ranking } = service;
    await ranking.putBoard({ name: 'lg', ...BOARD });
    // 360 entries of 5 units each were one call of 1 800 units: applied before, refused now.
    const refused = ranking.incrementBatch('lg', newItems(360));
    await expect(refused).rejects.toThrow(RequestTooCostlyError);
    const perEntry = entryCost({}, { ...BOARD, views: [] });
    expect(perEntry).toBe(5 + LEAGUE_PLACEMENT_WRITE_COST);
    const within = Math.floor(BOUND / perEntry);
    await expect(refused).rejects.toThrow(`send at most ${within} such entries per batch`);
    expect((await ranking.top('lg', 'week', 0, 1)).items).toEqual([]);
    expect((await ranking.incrementBatch('lg', newItems(within))).body.count).toBe(within);
    expect((await ranking.top('lg', 'week', 0, within)).items).toHaveLength(within);
  });
});
