import { FakeClock } from '../support/clock';
import { startRankingService } from '../support/ranking';
import { startTestRedis, TestRedis, TOPOLOGIES } from '../support/redis';
import type { RankingService } from '../../src/ranking/ranking.service';
import type { RedisService } from '../../src/redis/redis.service';

const T0 = 1_700_000_000_000;
const PASS = { leaseMs: 30_000, claimBatch: 100 };
const WINDOWS = [
  { name: 'hour', period: '1h', interval: '5m' },
  { name: 'day', period: '24h', interval: '1h' },
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

  async function feed(board: string): Promise<void> {
    await service.ranking.putBoard(board, WINDOWS, 3, false, undefined, undefined, undefined, undefined, 50);
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
    expect((await redis.dataKeys('board:b*')).filter((key) => !key.endsWith(':cfg'))).toEqual([]);
    expect((await service.ranking.listSegments('b', { offset: 0, limit: 10 })).segments).toEqual([]);
  });

  it('a board delete removes every segment key', async () => {
    await feed('b');
    await service.ranking.deleteBoard('b');
    expect(await redis.dataKeys('board:b*')).toEqual([]);
  });

  it('a reset that drops a window drops it in every segment too', async () => {
    await feed('b');
    await service.ranking.putBoard('b', [WINDOWS[1]], 3, true, undefined, undefined, undefined, undefined, 50);
    expect((await redis.dataKeys('board:b*')).filter((key) => key.includes(':hour~'))).toEqual([]);
    expect((await service.ranking.top('b', 'day', 0, 10, { segment: 'u' })).items).toEqual([
      { item: 'x', score: 2, rank: 1, previousRank: null },
    ]);
  });
});
