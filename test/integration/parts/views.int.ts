import { ConflictError, InvalidInputError } from '../../../src/common/errors';
import { DEFAULT_HOT_TAU_SEC, HOT_EPOCH_SEC } from '../../../src/ranking/options/views/views.limits';
import { hotScore } from '../../../src/ranking/options/views/trending-math';
import { useRankingService } from '../../../harness/ranking';

const T0 = 1_700_002_800_000; // an hour boundary (unix ms)
const T0_SEC = T0 / 1000;
const WINDOWS = [
  { name: 'hour', period: '1h', interval: '5m' },
  { name: 'day', period: '24h', interval: '1h' },
];
const VIEWS = [
  { name: 'fading', mode: 'decay', window: 'hour', halfLife: '10m' },
  { name: 'hot', mode: 'hot', window: 'day' },
  { name: 'rising', mode: 'rising', window: 'hour', baseline: 'day', minCount: 2 },
];

describe.each([1, 3])('trending views (real Redis, shards: %i)', (shards) => {
  const ctx = useRankingService('single');
  const put = (views: object[] | undefined, windows = WINDOWS, reset = false) =>
    ctx.ranking.putBoard({ name: 'b', windows, shards, reset, views: views as never });

  beforeEach(async () => {
    ctx.clock.setMs(T0);
    await ctx.ranking.deleteBoard('b').catch(() => undefined);
    await put(VIEWS);
  });

  it('stores views with the board and answers them', async () => {
    const board = await ctx.ranking.getBoard('b');
    expect(board.views).toEqual([
      { name: 'fading', mode: 'decay', window: 'hour', halfLife: 600 },
      { name: 'hot', mode: 'hot', window: 'day', tau: DEFAULT_HOT_TAU_SEC },
      { name: 'rising', mode: 'rising', window: 'hour', baseline: 'day', minCount: 2 },
    ]);
    // A PUT without views keeps them; [] removes them.
    expect((await put(undefined)).created).toBe(false);
    expect((await ctx.ranking.getBoard('b')).views).toHaveLength(3);
    expect((await put([])).board.views).toBeUndefined();
  });

  it.each([
    [[{ name: 'hour', mode: 'hot', window: 'day' }], /views\.0\.name "hour" is already a window or view name/],
    [[VIEWS[1], VIEWS[1]], /views\.1\.name "hot" is already/],
    [[{ name: 'v', mode: 'hot', window: 'week' }], /views\.0\.window "week" is not a window of the board/],
    [[{ name: 'v', mode: 'decay', window: 'hour' }], /views\.0\.halfLife must be a duration/],
    [[{ name: 'v', mode: 'decay', window: 'day', halfLife: 60 }], /views\.0\.halfLife must be at least 168.75 s/],
    [[{ name: 'v', mode: 'hot', window: 'day', halfLife: 60 }], /views\.0\.halfLife is not a field of a hot view/],
    [[{ name: 'v', mode: 'rising', window: 'day', baseline: 'hour' }], /baseline "hour" \(3600 s\) must be longer/],
    [[{ name: 'v', mode: 'rising', window: 'hour' }], /views\.0\.baseline "undefined" is not a window/],
    [[{ name: 'v', mode: 'trendy', window: 'hour' }], /views\.0\.mode must be one of decay, hot, rising/],
  ])('refuses a bad view config %#', async (views, message) => {
    await expect(put(views)).rejects.toThrow(InvalidInputError);
    await expect(put(views)).rejects.toThrow(message);
  });

  it('refuses to keep views whose window a PUT removes', async () => {
    await expect(put(undefined, [WINDOWS[1]], true)).rejects.toThrow(ConflictError);
  });

  it('decay: the half-life-decayed sum of the live slots as of now, minus exactly what expired', async () => {
    await ctx.ranking.increment('b', 'x', 8, undefined, undefined, T0_SEC - 1200); // slot T0 - 1200
    await ctx.ranking.increment('b', 'x', 4); // slot T0
    await ctx.ranking.increment('b', 'y', 10, undefined, undefined, T0_SEC - 600);
    ctx.clock.setMs(T0 + 60_000);
    const value = (ageSec: number, amount: number) => amount * 2 ** (-ageSec / 600);
    const top = await ctx.ranking.top('b', 'fading', 0, 10);
    expect(top).toMatchObject({ window: 'fading', mode: 'decay', from: T0_SEC - 3300, to: T0_SEC + 300 });
    const x = value(1260, 8) + value(60, 4);
    const y = value(660, 10);
    expect(top.items.map((row) => row.item)).toEqual(['x', 'y']);
    expect(top.items[0].score).toBeCloseTo(x, 12);
    expect(top.items[1].score).toBeCloseTo(y, 12);
    const item = await ctx.ranking.item('b', 'fading', 'y');
    expect(item).toMatchObject({ mode: 'decay', item: 'y', rank: 2, percentile: 0 });
    // The slot of T0 - 1200 expires at T0 + 2400: x keeps only its newer event.
    ctx.clock.setMs(T0 + 2400_000);
    const later = await ctx.ranking.top('b', 'fading', 0, 10);
    expect(later.items.find((row) => row.item === 'x')!.score).toBeCloseTo(value(2400, 4), 12);
    // Every slot gone: nothing left, not a rounding remainder.
    ctx.clock.setMs(T0 + 3600_000);
    expect((await ctx.ranking.top('b', 'fading', 0, 10)).items).toEqual([]);
  });

  it('decay: items with equal sums in one slot tie exactly, whatever the order of their entries', async () => {
    // One entry at a time, x's 1+1+1+1+3+2+3 and y's 1+1+1+3+3+1+2 round apart at this slot's factor.
    const x = [1, 1, 1, 1, 3, 2, 3];
    const y = [1, 1, 1, 3, 3, 1, 2];
    ctx.clock.setMs(1_732_985_120_000);
    const windows = [{ name: 'short', period: 30, interval: 10 }];
    const views = [{ name: 'fade', mode: 'decay', window: 'short', halfLife: 7 }];
    await ctx.ranking.putBoard({ name: 'tie', windows, shards, views: views as never });
    const entries = x.flatMap((amount, i) => [
      { item: 'x', amount },
      { item: 'y', amount: y[i] },
    ]);
    await ctx.ranking.incrementBatch('tie', entries);
    const top = await ctx.ranking.top('tie', 'fade', 0, 10);
    await ctx.ranking.deleteBoard('tie');
    expect(top.items.map((row) => [row.rank, row.item, row.score])).toEqual([
      [1, 'y', 12],
      [1, 'x', 12],
    ]);
  });

  it('decay: rebases its landmark every 256 half-lives without changing any value', async () => {
    const epochSec = 256 * 600;
    const boundaryMs = Math.ceil(T0_SEC / epochSec) * epochSec * 1000;
    ctx.clock.setMs(boundaryMs - 600_000);
    await ctx.ranking.increment('b', 'x', 3);
    await ctx.ranking.increment('b', 'y', 2, undefined, undefined, (boundaryMs - 1200_000) / 1000);
    const before = await ctx.ranking.top('b', 'fading', 0, 10);
    ctx.clock.advanceMs(1200_000); // across the epoch boundary
    const after = await ctx.ranking.top('b', 'fading', 0, 10);
    expect(after.items.map((row) => row.item)).toEqual(before.items.map((row) => row.item));
    before.items.forEach((row, i) => expect(after.items[i].score / row.score).toBeCloseTo(2 ** -2, 12));
  });

  it('hot: log10 of the sum plus firstSeen over tau; firstSeen is the earliest event, forgotten when the item leaves', async () => {
    await ctx.ranking.increment('b', 'old', 1000, undefined, undefined, T0_SEC - 7200);
    await ctx.ranking.increment('b', 'new', 10);
    await ctx.ranking.increment('b', 'new', 5, undefined, undefined, T0_SEC - 3600.5);
    const top = await ctx.ranking.top('b', 'hot', 0, 10);
    expect(top.items.map((row) => [row.rank, row.item])).toEqual([
      [1, 'old'],
      [2, 'new'],
    ]);
    expect(top.items[0].score).toBeCloseTo(hotScore(1000, T0_SEC - 7200, DEFAULT_HOT_TAU_SEC, HOT_EPOCH_SEC), 9);
    expect(top.items[1].score).toBeCloseTo(hotScore(15, T0_SEC - 3600.5, DEFAULT_HOT_TAU_SEC, HOT_EPOCH_SEC), 9);
    // A creation time sent with an event counts as seen then.
    await ctx.ranking.increment('b', 'made', 1, undefined, undefined, undefined, T0_SEC - 86400 * 3);
    expect((await ctx.ranking.item('b', 'hot', 'made')).score).toBeCloseTo(
      hotScore(1, T0_SEC - 86400 * 3, DEFAULT_HOT_TAU_SEC, HOT_EPOCH_SEC),
      9,
    );
    await expect(ctx.ranking.increment('b', 'made', 1, undefined, undefined, undefined, T0_SEC + 6)).rejects.toThrow(
      /createdAt must not be more than 5 s in the future/,
    );
    // 'old' leaves the day window, then comes back: fresh.
    ctx.clock.setMs(T0 + 23 * 3600_000);
    await ctx.ranking.increment('b', 'old', 1);
    const back = await ctx.ranking.item('b', 'hot', 'old');
    expect(back.score).toBeCloseTo(hotScore(1, T0_SEC + 23 * 3600, DEFAULT_HOT_TAU_SEC, HOT_EPOCH_SEC), 9);
  });

  it('rising: observed against the scaled baseline, new items floored at 1, with phase and since', async () => {
    // 'steady': 24 per hour all day; 'burst': 1 per hour all day, then 30 in the last 10 minutes.
    const entries = [];
    for (let h = 1; h < 24; h++) {
      entries.push({ item: 'steady', amount: 24, at: T0_SEC - h * 3600 });
      entries.push({ item: 'burst', amount: 1, at: T0_SEC - h * 3600 });
    }
    await ctx.ranking.incrementBatch('b', entries);
    ctx.clock.setMs(T0 + 1800_000);
    await ctx.ranking.incrementBatch('b', [
      { item: 'steady', amount: 12 },
      { item: 'burst', amount: 10, at: T0_SEC + 1200 },
      { item: 'burst', amount: 20 },
      { item: 'fresh', amount: 3 },
      { item: 'tiny', amount: 1 },
    ]);
    const top = await ctx.ranking.top('b', 'rising', 0, 10);
    expect(top.mode).toBe('rising');
    const expected = (baseline: number) => (baseline * 3600) / 86400;
    expect(top.items.map((row) => row.item)).toEqual(['burst', 'fresh']);
    const [burst, fresh] = top.items;
    const burstExpected = expected(23 + 30);
    expect(burst).toMatchObject({ rank: 1, observed: 30, phase: 'rising', since: T0_SEC + 1800 });
    expect(burst.expected!).toBeCloseTo(burstExpected, 12);
    expect(burst.score).toBeCloseTo((30 - burstExpected) ** 2 / burstExpected, 12);
    expect(fresh).toMatchObject({ rank: 2, observed: 3, expected: 1, score: 4, phase: 'new' });
  });

  it('reads and writes a view as the config last stored defines it, read before and after the change', async () => {
    // Each shard's Lua state keeps the views it decoded (views_lib's LOADED): a PUT between two reads
    // must reach the next read and write, and a board deleted and made again starts from no state.
    await ctx.ranking.increment('b', 'x', 8, undefined, undefined, T0_SEC - 1200);
    expect((await ctx.ranking.top('b', 'fading', 0, 10)).items[0].score).toBeCloseTo(8 * 2 ** -2, 12);
    await put([{ ...VIEWS[0], halfLife: '20m' }, VIEWS[2]]);
    expect((await ctx.ranking.top('b', 'fading', 0, 10)).items[0].score).toBeCloseTo(8 * 2 ** -1, 12);
    await expect(ctx.ranking.top('b', 'hot', 0, 10)).rejects.toThrow(/hot/);
    await ctx.ranking.increment('b', 'y', 4);
    expect((await ctx.ranking.item('b', 'fading', 'y')).score).toBeCloseTo(4, 12);
    await ctx.ranking.deleteBoard('b');
    await put(VIEWS);
    await ctx.ranking.increment('b', 'z', 2);
    const top = await ctx.ranking.top('b', 'fading', 0, 10);
    expect(top.items.map((row) => [row.item, row.score])).toEqual([['z', 2]]);
  });

  it('a view added to a board with data is built from its live slots', async () => {
    await put([]);
    await ctx.ranking.increment('b', 'x', 8, undefined, undefined, T0_SEC - 1200);
    await ctx.ranking.increment('b', 'x', 4);
    await put(VIEWS);
    const top = await ctx.ranking.top('b', 'fading', 0, 10);
    expect(top.items[0].score).toBeCloseTo(8 * 2 ** -2 + 4, 12);
    expect((await ctx.ranking.item('b', 'hot', 'x')).score).toBeCloseTo(
      hotScore(12, T0_SEC - 3600, DEFAULT_HOT_TAU_SEC, HOT_EPOCH_SEC),
      9,
    );
  });
});
