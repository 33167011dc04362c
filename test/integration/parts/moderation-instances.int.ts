import { FakeClock } from '../../../harness/clock';
import { composeRanking, RankingGraph } from '../../../harness/compose-ranking';
import { startTestRedis, TestRedis, TOPOLOGIES } from '../../../harness/redis';
import { validateConfig } from '../../../src/common/config';
import { PREVIOUS_RANKS_FRESH_MS } from '../../../src/ranking/core/ranking.limits';
import { ModerationService } from '../../../src/ranking/moderation/moderation.service';
import { RedisFunctions } from '../../../src/redis/redis-functions';
import { RedisService } from '../../../src/redis/redis.service';
import { RedisSettings } from '../../../src/redis/redis.settings';

const T0 = 1_700_002_800_000; // an hour boundary (unix ms)
const MINUTE_MS = 60_000;

/**
 * Issue #49, "moderation takes effect on every instance within 1 s": a sharded board's previous ranks
 * are a merge each instance caches; the instance that hides an item forgets its copy, another one
 * must read the shards again within PREVIOUS_RANKS_FRESH_MS, though its slot has not turned.
 */
describe.each(TOPOLOGIES)('previousRank after a moderation change on another instance (%s)', (topology) => {
  const clock = new FakeClock(T0);
  let redis: TestRedis;
  let connection: RedisService;
  let moderator: RankingGraph;
  let reader: RankingGraph;

  beforeAll(async () => {
    redis = await startTestRedis(topology);
    const config = validateConfig({ ...redis.env, REDIS_COMMAND_TIMEOUT_MS: '5000' });
    connection = new RedisService(RedisSettings.from(config), clock);
    await connection.waitUntilReady(10_000);
    const functions = new RedisFunctions(connection);
    moderator = await composeRanking(connection, functions, config, clock);
    reader = await composeRanking(connection, functions, config, clock);
  });
  afterAll(async () => {
    await connection.onApplicationShutdown();
    await redis.stop();
  });

  const previousRanks = async () => {
    const top = await reader.ranking.top('mod', 'w', 0, 10);
    return Object.fromEntries(top.items.map((row) => [row.item, row.previousRank]));
  };

  it('hides and allows again within a second, and not before', async () => {
    await moderator.ranking.putBoard({
      name: 'mod',
      windows: [{ name: 'w', period: '3m', interval: '1m', snapshots: { keep: 2, top: 10 } }],
      shards: 3,
    });
    for (const [item, amount] of Object.entries({ a: 5, b: 4, c: 3, d: 2 })) {
      await moderator.ranking.increment('mod', item, amount);
    }
    clock.setMs(T0 + MINUTE_MS);
    await moderator.ranking.increment('mod', 'd', 1);
    expect(await previousRanks()).toEqual({ a: 1, b: 2, c: 3, d: 4 });

    const moderation = moderator.module.get(ModerationService);
    await moderation.setState({ name: 'mod', item: 'b', state: 'hidden' });
    clock.setMs(T0 + MINUTE_MS + PREVIOUS_RANKS_FRESH_MS - 1);
    expect(await previousRanks()).toEqual({ a: 1, c: 3, d: 4 });
    clock.setMs(T0 + MINUTE_MS + PREVIOUS_RANKS_FRESH_MS);
    expect(await previousRanks()).toEqual({ a: 1, c: 2, d: 3 });

    await moderation.setState({ name: 'mod', item: 'b', state: null });
    clock.setMs(T0 + MINUTE_MS + 2 * PREVIOUS_RANKS_FRESH_MS);
    expect(await previousRanks()).toEqual({ a: 1, b: 2, c: 3, d: 4 });
  });
});
