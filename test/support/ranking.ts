import { Clock } from '../../src/common/clock';
import { validateConfig } from '../../src/common/config';
import { RankingService } from '../../src/ranking/ranking.service';
import { RankingStore } from '../../src/ranking/ranking.store';
import { RedisService } from '../../src/redis/redis.service';
import { TestRedis } from './redis';

/** A RankingService on the test file's Redis without the HTTP app (config layered over the test's env). */
export async function startRankingService(redis: TestRedis, clock: Clock, env: Record<string, string> = {}): Promise<{ ranking: RankingService; redisService: RedisService }> {
  const config = validateConfig({ ...redis.env, REDIS_COMMAND_TIMEOUT_MS: '5000', ...env });
  const redisService = new RedisService(config, clock);
  await redisService.waitUntilReady(10_000);
  return { ranking: new RankingService(new RankingStore(redisService, config), clock), redisService };
}
