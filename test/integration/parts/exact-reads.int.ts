import { RedisService } from '../../../src/redis/redis.service';
import {
  DECAY_REBASE_CHUNK,
  DECAY_REBASE_HALF_LIVES,
  DEFAULT_HOT_TAU_SEC,
  HOT_EPOCH_SEC,
} from '../../../src/ranking/options/views/views.limits';
import { RankingService } from '../../../src/ranking/ranking.service';
import { hotScore } from '../../../src/ranking/options/views/trending-math';
import { FakeClock } from '../../../harness/clock';
import { startRankingService, useRankingService } from '../../../harness/ranking';
import { startTestRedis, TestRedis, TOPOLOGIES } from '../../../harness/redis';

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
    await ctx.ranking.putBoard({ name: 'b', windows: WINDOWS, shards, views: VIEWS as never });
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

  it("an unlike keeps a hot item's firstSeen (the like's own time, to the ms), it does not move it to now's second", async () => {
    ctx.clock.setMs(T0 + 4466);
    await ctx.ranking.like('b', 'post', 'ann', false);
    await ctx.ranking.like('b', 'post', 'bob', false);
    await ctx.ranking.like('b', 'post', 'ann', true);
    const hot = await ctx.ranking.item('b', 'hot', 'post');
    expect(hot.score).toBeCloseTo(hotScore(1, T0_SEC + 4.466, DEFAULT_HOT_TAU_SEC, HOT_EPOCH_SEC), 9);
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

/**
 * A decay view's landmark moves every DECAY_REBASE_HALF_LIVES half-lives: the members move in chunks of
 * DECAY_REBASE_CHUNK per script call, and every read in between merges the two scales exactly.
 */
describe.each(TOPOLOGIES)('decay rebase in chunks (real Redis, %s)', (topology) => {
  const HALF_LIFE_SEC = 1;
  const EPOCH_SEC = HALF_LIFE_SEC * DECAY_REBASE_HALF_LIVES;
  const LANDMARK_SEC = Math.floor(T0_SEC / EPOCH_SEC) * EPOCH_SEC;
  const NEXT_EPOCH_MS = (LANDMARK_SEC + EPOCH_SEC) * 1000;
  const ITEMS = 8 * DECAY_REBASE_CHUNK + 88;
  let redis: TestRedis;
  let started: { ranking: RankingService; redisService: RedisService };
  const clock = new FakeClock(T0);
  const raw = (key: string) => `{${redis.prefix}board:d}:fading:${key}`;
  const amountOf = (i: number) => (i % 9) + 1;
  /** The view's rows as a model computes them: one slot (T0), decayed to now; ties by id, descending. */
  const expected = (extra: Map<string, number>) =>
    Array.from({ length: ITEMS }, (_, i) => `i${i}`)
      .map((item, i) => ({ item, amount: amountOf(i) + (extra.get(item) ?? 0) }))
      .sort((a, b) => b.amount - a.amount || (a.item < b.item ? 1 : -1));

  beforeAll(async () => {
    redis = await startTestRedis(topology);
    started = await startRankingService(redis, clock, {});
  });
  afterAll(async () => {
    await started.redisService.onApplicationShutdown();
    await redis.stop();
  });

  it('moves a chunk per call and answers every read exactly while it runs', async () => {
    const { ranking } = started;
    clock.setMs(T0);
    await ranking.putBoard({
      name: 'd',
      windows: [{ name: 'm', period: '3m', interval: '1m' }],
      shards: 1,
      views: [{ name: 'fading', mode: 'decay', window: 'm', halfLife: HALF_LIFE_SEC }] as never,
    });
    const entries = Array.from({ length: ITEMS }, (_, i) => ({ item: `i${i}`, amount: amountOf(i) }));
    // A window and a decay view: 3.5 cost units an entry, so batches of 500 (WRITE_COST_PER_CALL).
    for (let from = 0; from < ITEMS; from += 500) await ranking.incrementBatch('d', entries.slice(from, from + 500));
    expect(NEXT_EPOCH_MS - T0).toBeLessThan(60_000); // the rebase happens while the slot is live
    clock.setMs(NEXT_EPOCH_MS + 1000);
    const decayed = (amount: number) => amount * 2 ** ((T0_SEC - clock.nowMs() / 1000) / HALF_LIFE_SEC);

    const first = await ranking.top('d', 'fading', 0, 20);
    // The read's call moved one chunk: both scales hold members, the landmark has not moved yet.
    expect(await redis.client.zcard(raw('next'))).toBe(DECAY_REBASE_CHUNK);
    expect(await redis.client.zcard(raw('top'))).toBe(ITEMS - DECAY_REBASE_CHUNK);
    expect(await redis.client.hget(raw('meta'), 'next')).toBe(String(LANDMARK_SEC + EPOCH_SEC));
    const model = expected(new Map());
    expect(first.items.map((row) => row.item)).toEqual(model.slice(0, 20).map((row) => row.item));
    first.items.forEach((row, i) => expect(row.score).toBeCloseTo(decayed(model[i].amount), 12));
    expect(first.items.map((row) => row.rank)).toEqual(
      model.slice(0, 20).map((row) => 1 + model.filter((other) => other.amount > row.amount).length),
    );

    // Writes land on the scale that holds their item; item and around reads merge both.
    const moved = (await redis.client.zrange(raw('next'), 0, 0))[0];
    const unmoved = (await redis.client.zrange(raw('top'), -1, -1))[0];
    await ranking.increment('d', moved, 20);
    await ranking.increment('d', unmoved, 30);
    const extra = new Map([
      [moved, 20],
      [unmoved, 30],
    ]);
    const after = expected(extra);
    const top = await ranking.top('d', 'fading', 0, 5);
    expect(top.items.slice(0, 2).map((row) => row.item)).toEqual(after.slice(0, 2).map((row) => row.item));
    const mid = after[1000];
    const item = await ranking.item('d', 'fading', mid.item);
    expect(item.rank).toBe(1 + after.filter((row) => row.amount > mid.amount).length);
    expect(item.score).toBeCloseTo(decayed(mid.amount), 12);
    const around = await ranking.around('d', 'fading', mid.item, 2);
    expect(around.items.map((row) => row.item)).toEqual(after.slice(998, 1003).map((row) => row.item));
    expect(await redis.client.exists(raw('next'))).toBe(1); // still moving: every read above merged

    // Each further call moves one more chunk, then one scale again, at the new landmark.
    for (let call = 0; call < 3; call++) await ranking.item('d', 'fading', 'i0');
    expect(await redis.client.exists(raw('next'))).toBe(0);
    expect(await redis.client.zcard(raw('top'))).toBe(ITEMS);
    expect(await redis.client.hgetall(raw('meta'))).toEqual({ landmark: String(LANDMARK_SEC + EPOCH_SEC) });
    const settled = await ranking.top('d', 'fading', 0, ITEMS);
    expect(settled.items.map((row) => row.item)).toEqual(after.map((row) => row.item));
    settled.items.forEach((row, i) => expect(row.score).toBeCloseTo(decayed(after[i].amount), 12));
  });
});
