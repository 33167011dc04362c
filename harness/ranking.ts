import type { Redis } from 'ioredis';
import { Clock } from '../src/common/clock';
import { FakeClock } from './clock';
import { AppConfig, validateConfig } from '../src/common/config';
import { GroupBoardsService } from '../src/ranking/group-boards/group-boards.service';
import { LookupService } from '../src/ranking/lookup/lookup.service';
import { StandingService } from '../src/ranking/standing/standing.service';
import { RankingService } from '../src/ranking/ranking.service';
import { RedisService } from '../src/redis/redis.service';
import { RedisSettings } from '../src/redis/redis.settings';
import { RedisFunctions } from '../src/redis/redis-functions';
import { startTestRedis, TestRedis, Topology } from './redis';
import { composeRanking } from './compose-ranking';

/** A RankingService on the test file's Redis without the HTTP app (config layered over the test's env). */
export async function startRankingService(
  redis: TestRedis,
  clock: Clock,
  env: Record<string, string> = {},
): Promise<{
  ranking: RankingService;
  lookup: LookupService;
  standing: StandingService;
  groupBoards: GroupBoardsService;
  redisService: RedisService;
  functions: RedisFunctions;
}> {
  const config = validateConfig({ ...redis.env, REDIS_COMMAND_TIMEOUT_MS: '5000', ...env });
  const redisService = new RedisService(RedisSettings.from(config), clock);
  const functions = new RedisFunctions(redisService);
  await redisService.waitUntilReady(10_000);
  const { ranking, lookup, standing, groupBoards } = await composeRanking(redisService, functions, config, clock);
  return { ranking, lookup, standing, groupBoards, redisService, functions };
}

/** A RankingService with its own stores and config cache over an existing connection (a second instance). */
export async function rankingServiceOn(
  redisService: RedisService,
  functions: RedisFunctions,
  config: AppConfig,
  clock: Clock,
): Promise<RankingService> {
  return (await composeRanking(redisService, functions, config, clock)).ranking;
}

/** What useRankingService registers: the clock at once, the rest once beforeAll has run. */
export interface RankingUnderTest {
  clock: FakeClock;
  readonly ranking: RankingService;
  readonly lookup: LookupService;
  readonly standing: StandingService;
  readonly groupBoards: GroupBoardsService;
  readonly redis: TestRedis;
}

/**
 * Registers, in the calling describe block, a Redis of its own (`topology`) and a RankingService on it
 * driven by a FakeClock; `ranking` can be read once beforeAll has run. Stops both afterAll.
 */
export function useRankingService(topology: Topology, env: Record<string, string> = {}): RankingUnderTest {
  const clock = new FakeClock(0);
  let redis: TestRedis | undefined;
  let started: Awaited<ReturnType<typeof startRankingService>> | undefined;
  beforeAll(async () => {
    redis = await startTestRedis(topology);
    started = await startRankingService(redis, clock, env);
  });
  afterAll(async () => {
    await started?.redisService.onApplicationShutdown();
    await redis?.stop();
  });
  const service = () => {
    if (!started) throw new Error('the RankingService starts in beforeAll');
    return started;
  };
  return {
    clock,
    get ranking() {
      return service().ranking;
    },
    get lookup() {
      return service().lookup;
    },
    get standing() {
      return service().standing;
    },
    get groupBoards() {
      return service().groupBoards;
    },
    get redis() {
      if (!redis) throw new Error('the Redis starts in beforeAll');
      return redis;
    },
  };
}

/** A ranking service and the one node it runs on. */
export type OwnServerRanking = Awaited<ReturnType<typeof startRankingService>> & { node: Redis };

/**
 * A ranking service on a redis-server of its own for the enclosing describe (Jest hooks), for a test
 * that reads every call the server ran from its SLOWLOG. The getter answers once `beforeAll` ran.
 */
export function useOwnServerRanking(clock: Clock): () => OwnServerRanking {
  let redis: TestRedis;
  let started: OwnServerRanking;
  beforeAll(async () => {
    redis = await startTestRedis('single', { own: true });
    started = { ...(await startRankingService(redis, clock)), node: redis.client as Redis };
  });
  afterAll(async () => {
    await started.redisService.onApplicationShutdown();
    await redis.stop();
  });
  return () => started;
}
