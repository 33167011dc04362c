import Redis from 'ioredis';
import { validateConfig } from '../../../src/common/config';
import { composeRanking, RankingGraph } from '../../../harness/compose-ranking';
import { WriteCommands } from '../../../src/ranking/writes/write-commands';
import { RedisService } from '../../../src/redis/redis.service';
import { RedisSettings } from '../../../src/redis/redis.settings';
import { RedisFunctions } from '../../../src/redis/redis-functions';
import { FakeClock } from '../../../harness/clock';
import { DurableRedis, startDurableRedis, waitFor } from '../../support/ingest-fault';

const T0 = 1_700_000_000_000;
const PREFIX = 'rout:';

/**
 * An instance that starts while Redis is away still boots (requests answer 503 until it is back), and
 * the retractions a stopped instance left running are resumed once Redis is back, with no GET. Before,
 * the boot's listing of them failed and took the process down with it.
 */
describe('retractions left running, and an instance starting while Redis is away', () => {
  const clock = new FakeClock(T0);
  const commands = new WriteCommands(clock);
  const config = () => validateConfig({ REDIS_URL: redis.url, KEY_PREFIX: PREFIX, REDIS_COMMAND_TIMEOUT_MS: '5000' });
  const connections: RedisService[] = [];
  let redis: DurableRedis;

  async function instance(): Promise<{ graph: RankingGraph; connection: RedisService }> {
    const connection = new RedisService(RedisSettings.from(config()), clock);
    connections.push(connection);
    return { graph: await composeRanking(connection, new RedisFunctions(connection), config(), clock), connection };
  }

  beforeAll(async () => {
    redis = await startDurableRedis();
  });
  afterAll(async () => {
    for (const connection of connections) await connection.onApplicationShutdown();
    await redis.stop();
  });

  it('boots, then resumes and finishes the retraction once Redis is back', async () => {
    const first = await instance();
    await first.connection.waitUntilReady(10_000);
    await first.graph.ranking.putBoard({
      name: 'r',
      windows: [{ name: 'hour', period: '1h', interval: '1m' }],
      actors: true,
    });
    const expected = new Map<string, number>();
    for (let minute = 0; minute < 20; minute++) {
      // Enough spam contributions (one per item and slot) for several bounded steps.
      const entries = Array.from({ length: 40 }, (_, i) => ({
        item: `i${i}`,
        amount: 1 + (i % 3),
        actor: i % 4 === 0 ? `u${i}` : 'spam',
      }));
      await first.graph.ranking.incrementBatch(commands.batch({ board: 'r', entries }));
      for (const e of entries) if (e.actor !== 'spam') expected.set(e.item, (expected.get(e.item) ?? 0) + e.amount);
      clock.advanceSec(60);
    }
    clock.advanceSec(-60);
    const started = (await first.graph.retractions.start('r', { kind: 'actor', id: 'spam' })).body;
    await first.graph.retractions.onApplicationShutdown();
    expect((await first.graph.retractions.get('r', started.id)).state).toBe('running');

    await redis.kill();
    const second = await instance();
    await expect(second.graph.retractions.onApplicationBootstrap()).resolves.toBeUndefined();
    await redis.start();

    // Watched from outside (a GET of a running retraction would resume it itself): the instance's own
    // retry once Redis is back must finish it.
    const raw = new Redis(redis.url);
    try {
      await waitFor(
        'the retraction to be resumed and finished',
        async () => (await raw.zcard(`${PREFIX}retractions:running`)) === 0,
        30_000,
      );
    } finally {
      raw.disconnect();
    }
    expect((await second.graph.retractions.get('r', started.id)).state).toBe('done');
    const top = await second.graph.ranking.top('r', 'hour', 0, 100);
    expect(new Map(top.items.map((row) => [row.item, row.score]))).toEqual(expected);
  });
});
