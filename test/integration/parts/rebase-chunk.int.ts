import { validateConfig } from '../../../src/common/config';
import { composeRanking, RankingGraph } from '../../../harness/compose-ranking';
import { DECAY_REBASE_CHUNK, DECAY_REBASE_HALF_LIVES } from '../../../src/ranking/options/views/views.limits';
import { WriteCommands } from '../../../src/ranking/writes/write-commands';
import { RedisFunctions } from '../../../src/redis/redis-functions';
import { RedisService } from '../../../src/redis/redis.service';
import { RedisSettings } from '../../../src/redis/redis.settings';
import { FakeClock } from '../../../harness/clock';
import { startTestRedis, TestRedis } from '../../../harness/redis';

const DAY_MS = 86_400_000;
const EPOCH_MS = DECAY_REBASE_HALF_LIVES * DAY_MS;
const T0 = 20 * EPOCH_MS + DAY_MS;
const ITEMS = 300;
const VIEWS = ['a', 'b', 'c'];

/**
 * A call meeting several decay rebases at once (a board idle past an epoch: every decay view's
 * landmark moves) moves one chunk of members in all, shared by the views it loads, not a chunk per
 * view: the first re-weighting step after two idle weeks spent 816 of its 1 658 commands so, before
 * its units. The rebases still finish, call after call.
 */
describe('decay rebases share one chunk a call (single)', () => {
  const clock = new FakeClock(T0);
  const commands = new WriteCommands(clock);
  let redis: TestRedis;
  let service: RedisService;
  let graph: RankingGraph;

  beforeAll(async () => {
    redis = await startTestRedis('single');
    const config = validateConfig({ ...redis.env, REDIS_COMMAND_TIMEOUT_MS: '5000' });
    service = new RedisService(RedisSettings.from(config), clock);
    await service.waitUntilReady(10_000);
    graph = await composeRanking(service, new RedisFunctions(service), config, clock);
    await graph.ranking.putBoard({
      name: 'r',
      windows: [{ name: 'y', period: '400d', interval: '1d' }],
      views: VIEWS.map((name) => ({ name, mode: 'decay', window: 'y', halfLife: '1d' })),
    });
    for (let first = 0; first < ITEMS; first += 100) {
      const entries = Array.from({ length: 100 }, (_, k) => ({ item: `i${first + k}`, amount: first + k + 1 }));
      await graph.ranking.incrementBatch(commands.batch({ board: 'r', entries }));
    }
  });

  afterAll(async () => {
    await service.onApplicationShutdown();
    await redis.stop();
  });

  /** Members every view has moved to its new landmark so far. */
  async function moved(): Promise<number> {
    let total = 0;
    for (const key of await redis.client.keys('*:next')) total += await redis.client.zcard(key);
    return total;
  }

  it('moves at most one chunk a call over all the views, and finishes every rebase', async () => {
    clock.advanceMs(EPOCH_MS);
    const write = () =>
      graph.ranking.incrementBatch(commands.batch({ board: 'r', entries: [{ item: 'i0', amount: 1 }] }));
    await write();
    expect(await moved()).toBeGreaterThan(0);
    expect(await moved()).toBeLessThanOrEqual(DECAY_REBASE_CHUNK);
    for (let call = 0; call < 10; call++) await write();
    expect(await redis.client.keys('*:next')).toEqual([]);
    for (const view of VIEWS) {
      const top = await graph.ranking.top('r', view, 0, ITEMS);
      expect(top.items).toHaveLength(ITEMS);
    }
  });
});
