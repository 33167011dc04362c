import { FakeClock } from '../../../harness/clock';
import { startRankingService } from '../../../harness/ranking';
import { startTestRedis, TestRedis } from '../../../harness/redis';
import type { RankingService } from '../../../src/ranking/ranking.service';
import type { RedisService } from '../../../src/redis/redis.service';

/**
 * segment_lib's comparisons at their exact edges, on one shard (its own index is exact there: a sharded
 * board's claims refuse first). The segments property walks time in random steps and reads each segment
 * again before comparing, so it rarely stands on the millisecond an edge is at, and its reads drain what
 * a comparison left due; here the clock stands on each edge and the first call there is the one checked.
 */
const T0 = 1_700_000_000_000;
const PASS = { leaseMs: 30_000, claimBatch: 100 };
/** Slots of 10 s kept 30 s: a slot of T0 expires, and a segment written at T0 only stops being live, at T0 + 30 s. */
const WINDOW = { name: 'w', period: '30s', interval: '10s' };
const END_MS = T0 + 30_000;

describe('segment edges (single, 1 shard)', () => {
  const clock = new FakeClock(T0);
  let redis: TestRedis;
  let service: { ranking: RankingService; redisService: RedisService };

  beforeAll(async () => {
    redis = await startTestRedis('single');
    service = await startRankingService(redis, clock);
  });
  afterAll(async () => {
    await service.redisService.onApplicationShutdown();
    await redis.stop();
  });
  beforeEach(async () => {
    await redis.clear();
    clock.setMs(T0);
  });

  const put = (board: string, snapshots = false) =>
    service.ranking.putBoard({
      name: board,
      windows: [snapshots ? { ...WINDOW, snapshots: { keep: 3, top: 10 } } : WINDOW],
      shards: 1,
      segmentsMax: 2,
    });
  const increment = (board: string, item: string, segments: string[]) =>
    service.ranking.increment(board, item, 1, undefined, undefined, undefined, undefined, segments);
  const listed = async (board: string) =>
    (await service.ranking.listSegments(board, { offset: 0, limit: 10 })).segments;

  it('segments.max counts a segment live until the second its newest slot expires, and no longer', async () => {
    await put('b');
    await increment('b', 'a', ['en', 'fr']);
    clock.setMs(END_MS - 1);
    await expect(increment('b', 'a', ['de'])).rejects.toMatchObject({ code: 'SEGMENT_LIMIT' });
    clock.setMs(END_MS);
    // en and fr ended: naming them again makes them new, three new past the max of 2.
    await expect(increment('b', 'a', ['en', 'fr', 'de'])).rejects.toMatchObject({ code: 'SEGMENT_LIMIT' });
    await increment('b', 'a', ['de', 'pt']);
    expect(await listed('b')).toEqual([
      { name: 'de', items: 1 },
      { name: 'pt', items: 1 },
    ]);
  });

  it("a segment's slot is due the millisecond it expires: the first listing there drains it", async () => {
    await put('b');
    await increment('b', 'a', ['en']);
    clock.setMs(T0 + 10_000);
    await increment('b', 'b', ['en']);
    clock.setMs(T0 + 20_000);
    await increment('b', 'c', ['en']);
    clock.setMs(END_MS - 1);
    expect(await listed('b')).toEqual([{ name: 'en', items: 3 }]);
    clock.setMs(END_MS);
    expect(await listed('b')).toEqual([{ name: 'en', items: 2 }]);
    // Due again when its oldest slot left expires, as that drain recorded.
    clock.setMs(END_MS + 10_000);
    expect(await listed('b')).toEqual([{ name: 'en', items: 1 }]);
  });

  it("the scheduler alone takes a segment's snapshot at the boundary the board takes its own", async () => {
    await put('b', true);
    await increment('b', 'a', ['en']);
    clock.setMs(T0 + 10_000);
    for (let pass = 0; pass < 20 && (await service.ranking.expireDue(PASS)).visited > 0; pass++);
    // Keys, not reads: a read of the segment would cross its boundary itself.
    const keys = await redis.dataKeys('board:b*');
    const taken = async (suffix: string) => {
      const key = keys.find((k) => k.endsWith(suffix));
      return key === undefined ? [] : redis.client.zrange(key, 0, -1);
    };
    const board = await taken(':w:snaps');
    expect(board).toEqual([String(T0 / 1000 + 10)]);
    expect(await taken(':w~en:snaps')).toEqual(board);
  });
});
