import { validateConfig } from '../../src/common/config';
import { SystemClock } from '../../src/common/clock';
import { PreparedBoard } from '../../src/ranking/core/board';
import { RankingKeys } from '../../src/ranking/core/ranking.keys';
import type { BoardOptionsConfig } from '../../src/ranking/options/registry';
import { RANKING } from '../../src/ranking/ranking.functions';
import { RedisFunctions } from '../../src/redis/redis-functions';
import { RedisService } from '../../src/redis/redis.service';
import { RedisSettings } from '../../src/redis/redis.settings';
import { startTestRedis, TestRedis, type Topology } from '../../harness/redis';

/** The ranking library on a private single Redis, for tests that call its functions directly. */
export interface RankingFunctions {
  redis: TestRedis;
  functions: RedisFunctions;
  /** A new unsharded board of `windows` (views none), at `nowMs`, with an item cap and options when given. */
  board(windows: BoardWindow[], nowMs: number, maxItems?: number, options?: BoardOptionsConfig): Promise<PreparedBoard>;
}

export interface BoardWindow {
  name: string;
  periodSec: number;
  intervalSec: number;
}

/** Starts the Redis (one server, or a Cluster) and loads the library before the file's tests, and stops it after them. */
export function useRankingFunctions(topology: Topology = 'single'): RankingFunctions {
  const setup = {} as RankingFunctions;
  let service: RedisService;
  let keys: RankingKeys;
  let boards = 0;

  beforeAll(async () => {
    setup.redis = await startTestRedis(topology);
    const settings = RedisSettings.from(validateConfig({ ...setup.redis.env, REDIS_COMMAND_TIMEOUT_MS: '5000' }));
    service = new RedisService(settings, new SystemClock());
    await service.waitUntilReady(10_000);
    setup.functions = new RedisFunctions(service);
    setup.functions.define([RANKING.library]);
    await setup.functions.onModuleInit();
    keys = new RankingKeys(settings.keyPrefix);
  });
  afterAll(async () => {
    await service.onApplicationShutdown();
    await setup.redis.stop();
  });

  setup.board = async (windows, nowMs, maxItems, options = {}) => {
    const name = `fn${boards++}`;
    const reply = await setup.functions.call(RANKING.functions.boardPut, {
      ...{ ...options, keys: keys.board(name), windows, shards: 1, maxItems, views: [] },
      ...{ version: 'v-test', reset: false, nowMs },
    });
    if (reply.status === 'conflict') throw new Error(reply.message);
    const config = { ...options, name, version: reply.version, shards: 1, maxItems: maxItems ?? null, views: [] };
    return new PreparedBoard({ ...config, windows: JSON.parse(reply.windowsJson) }, () => keys.board(name));
  };
  return setup;
}
