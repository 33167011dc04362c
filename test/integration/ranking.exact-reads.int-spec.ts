import { DEFAULT_HOT_TAU_SEC, HOT_EPOCH_SEC } from '../../src/ranking/ranking.limits';
import { hotScore } from '../../src/ranking/trending-math';
import { useRankingService } from '../support/ranking';

const T0 = 1_700_002_800_000; // an hour boundary (unix ms)
const T0_SEC = T0 / 1000;
const WINDOWS = [
  { name: 'm', period: '3m', interval: '1m', snapshots: { keep: 5, top: 20 } },
  { name: 'day', period: '24h', interval: '1h' },
];
const VIEWS = [
  { name: 'fading', mode: 'decay', window: 'm', halfLife: '1m' },
  { name: 'hot', mode: 'hot', window: 'day' },
];

/**
 * Reads of views are exact and keep history whatever script is the first to cross a boundary, and
 * a hot view lists every item it holds: issue #22's exactness items, on plain and sharded boards
 * with expiry chunks of 3 fields and no scheduler.
 */
describe.each([1, 3])('exact view reads (real Redis, shards: %i, EXPIRE_CHUNK 3)', (shards) => {
  const ctx = useRankingService('single', { EXPIRE_CHUNK: '3' });

  beforeEach(async () => {
    ctx.clock.setMs(T0);
    await ctx.ranking.deleteBoard('b').catch(() => undefined);
    await ctx.ranking.putBoard('b', WINDOWS, shards, false, undefined, VIEWS as never);
  });

  it('a view read that is the first script after a boundary takes the snapshot before it expires anything', async () => {
    await ctx.ranking.incrementBatch('b', [
      { item: 'old', amount: 9 },
      { item: 'new', amount: 2 },
    ]);
    ctx.clock.setMs(T0 + 60_000);
    await ctx.ranking.increment('b', 'new', 1);
    // Three boundaries later the first slot has expired: the view read is the first script to see it.
    ctx.clock.setMs(T0 + 180_000);
    const fading = await ctx.ranking.top('b', 'fading', 0, 10);
    expect(fading.items.map((row) => row.item)).toEqual(['new']);
    const history = await ctx.ranking.history('b', 'm', T0_SEC + 180);
    expect(history.items).toEqual([
      { rank: 1, item: 'old', score: 9 },
      { rank: 2, item: 'new', score: 3 },
    ]);
  });

  it('a view read while expired slots drain lists nothing from outside its window', async () => {
    await ctx.ranking.incrementBatch(
      'b',
      Array.from({ length: 12 }, (_, i) => ({ item: `i${i}`, amount: i + 1 })),
    );
    ctx.clock.setMs(T0 + 60_000);
    await ctx.ranking.increment('b', 'late', 1);
    ctx.clock.setMs(T0 + 180_000);
    const fading = await ctx.ranking.top('b', 'fading', 0, 100);
    expect(fading.draining).toBe(false);
    expect(fading.items.map((row) => row.item)).toEqual(['late']);
    expect(fading.items[0].score).toBeCloseTo(2 ** -2, 12);
    expect(await ctx.ranking.item('b', 'fading', 'i11')).toMatchObject({ score: 0, rank: null });
  });

  it('a hot view lists an item first seen before its epoch, ranked by its (negative) hot score', async () => {
    const createdSec = HOT_EPOCH_SEC - 86_400 * 365;
    await ctx.ranking.increment('b', 'vintage', 50, undefined, undefined, undefined, createdSec);
    await ctx.ranking.increment('b', 'fresh', 1);
    const top = await ctx.ranking.top('b', 'hot', 0, 10);
    expect(top.items.map((row) => [row.rank, row.item])).toEqual([
      [1, 'fresh'],
      [2, 'vintage'],
    ]);
    expect(top.items[1].score).toBeCloseTo(hotScore(50, createdSec, DEFAULT_HOT_TAU_SEC, HOT_EPOCH_SEC), 6);
    expect(top.items[1].score).toBeLessThan(0);
    const vintage = await ctx.ranking.item('b', 'hot', 'vintage');
    expect(vintage).toMatchObject({ rank: 2, percentile: 0 });
    const around = await ctx.ranking.around('b', 'hot', 'vintage', 1);
    expect(around.items.map((row) => row.item)).toEqual(['fresh', 'vintage']);
  });
});
