import { validateConfig } from '../../src/common/config';
import { composeRanking, RankingGraph } from '../../harness/compose-ranking';
import { WriteCommands } from '../../src/ranking/writes/write-commands';
import { RedisService } from '../../src/redis/redis.service';
import { RedisSettings } from '../../src/redis/redis.settings';
import { RedisFunctions } from '../../src/redis/redis-functions';
import { FakeClock } from '../../harness/clock';
import { startTestRedis, TestRedis, TOPOLOGIES } from '../../harness/redis';

const T0 = 1_700_000_000_000;
const WINDOWS = [{ name: 'hour', period: '1h', interval: '1m' }];

describe.each(TOPOLOGIES)('a retraction on a board of several metrics (%s)', (topology) => {
  const clock = new FakeClock(T0);
  const commands = new WriteCommands(clock);
  let redis: TestRedis;
  let connection: RedisService;
  let graph: RankingGraph;

  beforeAll(async () => {
    redis = await startTestRedis(topology);
    const config = validateConfig({ ...redis.env, REDIS_COMMAND_TIMEOUT_MS: '5000' });
    connection = new RedisService(RedisSettings.from(config), clock);
    await connection.waitUntilReady(10_000);
    graph = await composeRanking(connection, new RedisFunctions(connection), config, clock);
  });

  afterAll(async () => {
    await connection.onApplicationShutdown();
    await redis.stop();
  });

  it.each([1, 3])('refuses an item retraction it cannot take out of every metric (%i shard(s))', async (shards) => {
    const name = `m${shards}`;
    await graph.ranking.putBoard({ name, windows: WINDOWS, shards, metrics: ['up', 'down'] });
    for (const metric of ['up', 'down'])
      await graph.ranking.incrementBatch(
        commands.batch({
          board: name,
          entries: [
            { item: 'x', amount: 9, metric },
            { item: 'y', amount: 2, metric },
          ],
        }),
      );
    await expect(graph.retractions.start(name, { kind: 'item', id: 'x' })).rejects.toMatchObject({
      code: 'INVALID_INPUT',
      message: expect.stringContaining('several metrics') as string,
    });
    // Nothing was taken: x still leads every metric.
    for (const metric of ['up', 'down']) {
      const page = await graph.ranking.top(name, 'hour', 0, 10, { metric });
      expect([metric, page.items.map((row) => row.item)]).toEqual([metric, ['x', 'y']]);
    }
  });
});
