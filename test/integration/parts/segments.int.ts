import { FakeClock } from '../../../harness/clock';
import { startRankingService } from '../../../harness/ranking';
import { startTestRedis, TestRedis, TOPOLOGIES } from '../../../harness/redis';
import type { ViewInput } from '../../../src/ranking/options/views/trending-math';
import type { RankingService } from '../../../src/ranking/ranking.service';
import type { RedisService } from '../../../src/redis/redis.service';

const T0 = 1_700_000_000_000;
const PASS = { leaseMs: 30_000, claimBatch: 100 };
const WINDOWS = [
  { name: 'hour', period: '1h', interval: '5m' },
  { name: 'day', period: '24h', interval: '1h' },
];
/** The same windows keeping history, and a view of each mode: a segment keeps all of them as its own. */
const KEEPING = [
  { ...WINDOWS[0], snapshots: { keep: 3, top: 10 } },
  { ...WINDOWS[1], snapshots: { keep: 2, top: 10 } },
];
const VIEWS = [
  { name: 'fade', mode: 'decay', window: 'hour', halfLife: '10m' },
  { name: 'hot', mode: 'hot', window: 'day', tau: '1h' },
  { name: 'rising', mode: 'rising', window: 'hour', baseline: 'day', minCount: 1 },
];

/** What segments leave in Redis: their keys stay in the board's hash tags, and go when their data expires or the board goes. */
describe.each(TOPOLOGIES)('segment keys (%s)', (topology) => {
  const clock = new FakeClock(T0);
  let redis: TestRedis;
  let service: { ranking: RankingService; redisService: RedisService };

  beforeAll(async () => {
    redis = await startTestRedis(topology);
    // A tiny chunk: draining takes many calls, so the due index must bring the board back.
    service = await startRankingService(redis, clock, { EXPIRE_CHUNK: '3' });
  });
  afterAll(async () => {
    await service.redisService.onApplicationShutdown();
    await redis.stop();
  });
  beforeEach(async () => {
    await redis.clear();
    clock.setMs(T0);
  });

  async function feed(board: string, keeping = false): Promise<void> {
    const [windows, views] = keeping ? [KEEPING, VIEWS] : [WINDOWS, undefined];
    await service.ranking.putBoard({ name: board, windows, shards: 3, views, segmentsMax: 50 });
    for (let i = 0; i < 30; i++) {
      const segments = [`s${i % 7}`, `t${i % 3}`];
      await service.ranking.increment(
        board,
        `i${i}`,
        1 + (i % 4),
        undefined,
        undefined,
        undefined,
        undefined,
        segments,
      );
      clock.advanceMs(60_000);
    }
    await service.ranking.incrementBatch(board, [{ item: 'x', amount: 2, segments: ['s1', 'u'] }]);
  }

  it('every segment key carries the hash tag of its shard', async () => {
    await feed('b');
    const keys = await redis.dataKeys('board:b*');
    const segmentKeys = keys.filter((key) => key.includes('~'));
    expect(segmentKeys.length).toBeGreaterThan(0);
    for (const key of [...segmentKeys, ...keys.filter((key) => /:seg(s|due)$/.test(key))])
      expect(key).toMatch(new RegExp(`^\\{${redis.prefix}board:b(/[12])?\\}:`));
  });

  it('once their data expired, the scheduler leaves no segment key behind', async () => {
    await feed('b');
    clock.advanceMs(25 * 3600_000);
    for (let pass = 0; pass < 200; pass++) {
      const result = await service.ranking.expireDue(PASS);
      if (result.visited === 0) break;
    }
    // The board-wide claims of a sharded board's segments (segment_claim.lua) expire by themselves, in
    // Redis time (the fake clock moved the service's only).
    const left = (await redis.dataKeys('board:b*')).filter((key) => !key.endsWith(':cfg'));
    const claims = left.filter((key) => key.endsWith(':segclaims'));
    for (const key of claims) expect(await redis.client.ttl(key)).toBeGreaterThan(0);
    expect(left.filter((key) => !claims.includes(key))).toEqual([]);
    expect((await service.ranking.listSegments('b', { offset: 0, limit: 10 })).segments).toEqual([]);
  });

  it('a board delete removes every segment key', async () => {
    await feed('b');
    await service.ranking.deleteBoard('b');
    expect(await redis.dataKeys('board:b*')).toEqual([]);
  });

  it("segments' views and history: every key in its shard's tag, all gone with the board", async () => {
    await feed('b', true);
    const keys = await redis.dataKeys('board:b*');
    for (const suffix of ['fade~s1:top', 'hot~s1:items', 'day~s1:mark', 'hour~s1:snaps', 'hour~s1:prev'])
      expect([suffix, keys.some((key) => key.endsWith(suffix))]).toEqual([suffix, true]);
    for (const key of keys) expect(key).toMatch(new RegExp(`^\\{${redis.prefix}board:b(/[12])?\\}:`));
    // Reading a segment that never held data stores nothing (any name may be read).
    const ghost = { segment: 'ghost' };
    clock.advanceMs(3600_000);
    for (const window of ['hour', 'fade', 'rising']) await service.ranking.top('b', window, 0, 10, ghost);
    await expect(service.ranking.history('b', 'day', undefined, 'ghost')).rejects.toMatchObject({
      code: 'SNAPSHOT_NOT_FOUND',
    });
    expect((await redis.dataKeys('board:b*')).filter((key) => key.includes('ghost'))).toEqual([]);
    await service.ranking.deleteBoard('b');
    expect(await redis.dataKeys('board:b*')).toEqual([]);
  });

  it("once their data expired, segments' views and history leave no key but those expiring by themselves", async () => {
    await feed('b', true);
    // Past the data, then past the marks' span (keep + 1 intervals): the due index brings the board back.
    for (const advanceMs of [25 * 3600_000, 4 * 3600_000]) {
      clock.advanceMs(advanceMs);
      for (let pass = 0; pass < 200; pass++) {
        const result = await service.ranking.expireDue(PASS);
        if (result.visited === 0) break;
      }
    }
    // Snapshots and marks expire in Redis time (the fake clock moved the service's only).
    const lasting = [];
    for (const key of await redis.dataKeys('board:b*')) if ((await redis.client.pttl(key)) === -1) lasting.push(key);
    // The board's own history and decay landmark stay with the board.
    const board = /:(cfg|fade:meta|(hour|day):(snaps|prev|snap:\d+))$/;
    expect(lasting.filter((key) => !board.test(key))).toEqual([]);
    expect(lasting.filter((key) => key.includes('~'))).toEqual([]);
  });

  it("the scheduler alone takes a segment's snapshots at the boundaries a board of its events gets them", async () => {
    const put = (board: string, max?: number) =>
      service.ranking.putBoard({ name: board, windows: KEEPING, shards: 3, segmentsMax: max });
    await put('b', 5);
    await put('m');
    for (let i = 0; i < 6; i++) {
      const item = `i${i % 4}`;
      await service.ranking.increment('b', item, 1 + i, undefined, undefined, undefined, undefined, ['en']);
      await service.ranking.increment('m', item, 1 + i);
      await service.ranking.increment('b', 'other', 1, undefined, undefined, undefined, undefined, ['fr']);
      // Nothing but scheduler passes between the writes, through several boundaries of both windows.
      for (let step = 0; step < 4; step++) {
        clock.advanceMs(17 * 60_000);
        for (let pass = 0; pass < 20 && (await service.ranking.expireDue(PASS)).visited > 0; pass++);
      }
    }
    const read = (board: string, window: string, at: number, segment?: string) =>
      service.ranking.history(board, window, at, segment).then(
        (found) => ({ ...found, board: 'm' }),
        (error: { code: string }) => error.code,
      );
    const nowSec = Math.floor(clock.nowMs() / 1000);
    let found = 0;
    for (const window of ['hour', 'day']) {
      const interval = window === 'hour' ? 300 : 3600;
      for (let at = nowSec - (nowSec % interval); at > nowSec - 6 * interval; at -= interval) {
        const own = await read('b', window, at, 'en');
        expect([window, at, own]).toEqual([window, at, await read('m', window, at)]);
        if (typeof own !== 'string' && own.items.length > 0) found++;
      }
    }
    expect(found).toBeGreaterThan(0);
  });

  it("a view a PUT adds or changes is built for each segment from the segment's live slots", async () => {
    const put = (board: string, views: ViewInput[], max?: number) =>
      service.ranking.putBoard({ name: board, windows: WINDOWS, shards: 3, views, segmentsMax: max });
    await put('b', [VIEWS[0]], 5);
    await put('m', [VIEWS[0]]);
    for (let i = 0; i < 12; i++) {
      const item = `i${i % 5}`;
      await service.ranking.increment('b', item, 1 + i, undefined, undefined, undefined, undefined, ['en']);
      await service.ranking.increment('m', item, 1 + i);
      await service.ranking.increment('b', `o${i}`, 2, undefined, undefined, undefined, undefined, ['fr']);
      clock.advanceMs(7 * 60_000);
    }
    // Changed (half-life), added (hot, rising) and dropped views, after the data is in.
    const changed = [{ ...VIEWS[0], halfLife: '30m' }, VIEWS[1], VIEWS[2]];
    await put('b', changed, 5);
    await put('m', changed);
    for (const view of ['fade', 'hot', 'rising']) {
      const own = await service.ranking.top('b', view, 0, 100, { segment: 'en' });
      const mirror = await service.ranking.top('m', view, 0, 100);
      expect([view, { ...own, board: 'm' }]).toEqual([view, mirror]);
      expect(own.items.length).toBeGreaterThan(0);
    }
    await put('b', [VIEWS[1]], 5);
    expect((await redis.dataKeys('board:b*')).filter((key) => /:(fade|rising)~/.test(key))).toEqual([]);
  });

  it('a reset that drops a window drops it in every segment too', async () => {
    await feed('b');
    await service.ranking.putBoard({ name: 'b', windows: [WINDOWS[1]], shards: 3, reset: true, segmentsMax: 50 });
    expect((await redis.dataKeys('board:b*')).filter((key) => key.includes(':hour~'))).toEqual([]);
    expect((await service.ranking.top('b', 'day', 0, 10, { segment: 'u' })).items).toEqual([
      { item: 'x', score: 2, rank: 1, previousRank: null },
    ]);
  });
  it('on a sharded board at its segment limit, a like repeating an earlier one answers not counted; a new one is refused', async () => {
    await service.ranking.putBoard({ name: 'lk', windows: WINDOWS, shards: 3, segmentsMax: 2 });
    const like = (user: string, segments?: string[]) =>
      service.ranking.like('lk', 'a b/c', user, false, undefined, undefined, undefined, segments);
    expect((await like('u1')).body.counted).toBe(true);
    // Three new names past segments.max 2: nothing to count for u1's repeat, so nothing to refuse.
    expect((await like('u1', ['en', 'fr', 'de:x'])).body.counted).toBe(false);
    await expect(like('u2', ['en', 'fr', 'de:x'])).rejects.toMatchObject({ code: 'SEGMENT_LIMIT' });
    expect((await service.ranking.top('lk', 'hour', 0, 10)).items).toEqual([
      { item: 'a b/c', score: 1, rank: 1, previousRank: null },
    ]);
  });
});
