import { FakeClock } from '../../harness/clock';
import { startRankingService } from '../../harness/ranking';
import { startTestRedis, TestRedis, Topology } from '../../harness/redis';
import type { RedisFunctions } from '../../src/redis/redis-functions';
import type { RedisService } from '../../src/redis/redis.service';
import type { RankingService } from '../../src/ranking/ranking.service';
import type { WindowInput } from '../../src/ranking/core/window-math';

/** An hour boundary (unix ms): where the ranking store specs' clock starts. */
export const T0 = 1_700_002_800_000;
export const T0_SEC = T0 / 1000;

/** An expiry pass of the due-index scheduler as the specs run it. */
export const PASS = { leaseMs: 30_000, claimBatch: 100 };

/** The ranking store specs' world: its fields are set once the file's beforeAll ran (useRankingStore). */
export interface RankingStoreWorld {
  redis: TestRedis;
  service: RedisService;
  functions: RedisFunctions;
  ranking: RankingService;
  clock: FakeClock;
  /** A raw key of board `board`'s shard 0, e.g. raw('m:top'). */
  raw(key: string, board?: string): string;
  /** Every data key of board `board`, sorted. */
  boardKeys(board?: string): Promise<string[]>;
  /**
   * Puts board `b` (again): window m (period `m`, 3m unless given, in 1m slots), h (1h in one slot) and
   * `also`; with `reset`, as one shard whose changed windows are dropped.
   */
  putB(change?: { m?: string; also?: WindowInput[]; reset?: boolean }): ReturnType<RankingService['putBoard']>;
}

/**
 * The world of the ranking store specs (test/integration/ranking.store.*.int-spec.ts), in one describe of
 * `topology`: a Redis of the file's own, the ranking service on it (EXPIRE_CHUNK 3, so expiry drains in
 * several calls) on a FakeClock, and before each test an emptied Redis, the clock at T0 and board `b`
 * (windows m: 3m in 1m slots, h: 1h in one slot). Answers the world, whose fields are set once the
 * file's beforeAll ran.
 */
export function useRankingStore(topology: Topology): RankingStoreWorld {
  const world = {
    raw: (key: string, board = 'b') => `{${world.redis.prefix}board:${board}}:${key}`,
    boardKeys: async (board = 'b') => (await world.redis.dataKeys(`board:${board}}*`)).sort(),
    putB: ({ m = '3m', also = [], reset = false } = {}) =>
      world.ranking.putBoard({
        name: 'b',
        windows: [{ name: 'm', period: m, interval: '1m' }, { name: 'h', period: '1h', interval: '1h' }, ...also],
        ...(reset ? { shards: 1, reset } : {}),
      }),
  } as RankingStoreWorld;
  beforeAll(async () => {
    world.redis = await startTestRedis(topology);
    world.clock = new FakeClock(T0);
    const started = await startRankingService(world.redis, world.clock, { EXPIRE_CHUNK: '3' });
    Object.assign(world, { ranking: started.ranking, service: started.redisService, functions: started.functions });
  });
  afterAll(async () => {
    await world.service.onApplicationShutdown();
    await world.redis.stop();
  });
  beforeEach(async () => {
    await world.redis.clear();
    world.clock.setMs(T0);
    await world.putB();
  });
  return world;
}
