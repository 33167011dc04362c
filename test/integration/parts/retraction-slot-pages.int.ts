import { AppConfig, validateConfig } from '../../../src/common/config';
import { adminStepUnits } from '../../../src/ranking/core/write-cost';
import { composeRanking, RankingGraph } from '../../../harness/compose-ranking';
import { RetractionStore } from '../../../src/ranking/retraction/retraction.store';
import { WriteCommands } from '../../../src/ranking/writes/write-commands';
import { RedisFunctions } from '../../../src/redis/redis-functions';
import { RedisService } from '../../../src/redis/redis.service';
import { RedisSettings } from '../../../src/redis/redis.settings';
import { FakeClock } from '../../../harness/clock';
import { startTestRedis, TestRedis, TOPOLOGIES } from '../../../harness/redis';

const T0 = 1_700_000_000_000;
/** Step budgets of either parity (a page of slots leaves a unit over after it, or none), and a default instance's. */
const BUDGETS = [40, 41, 42, 43, 44, 45, 46, 47, adminStepUnits(new AppConfig().WRITE_COST_PER_CALL)];
/**
 * Slots holding only another item before the retracted ones: two full pages of a step's slot walk at
 * every budget (the first step's likes scan spends what its page left).
 */
const EARLIER_SLOTS = Math.max(...BUDGETS) + 10;
const MOST_STEPS = 1000;

/**
 * An item's retraction walks a window's slots a page at a time (as many as the step's units pay for):
 * a full page may have more slots after it, so a window is done only once a page comes back short. The
 * items retracted here sit in the slot after several full pages of another item's: each comes out, the
 * board then answering what a twin that never had them answers.
 */
describe.each(TOPOLOGIES)('an item retraction past full pages of slots (%s)', (topology) => {
  const clock = new FakeClock(T0);
  const commands = new WriteCommands(clock);
  let redis: TestRedis;
  let service: RedisService;
  let graph: RankingGraph;

  beforeAll(async () => {
    redis = await startTestRedis(topology);
    const config = validateConfig({ ...redis.env, REDIS_COMMAND_TIMEOUT_MS: '5000' });
    service = new RedisService(RedisSettings.from(config), clock);
    await service.waitUntilReady(10_000);
    graph = await composeRanking(service, new RedisFunctions(service), config, clock);
    for (const name of ['p', 'twin'])
      await graph.ranking.putBoard({ name, windows: [{ name: 'd', period: '1d', interval: '1m' }] });
    for (let n = 0; n < EARLIER_SLOTS; n++) {
      for (const board of ['p', 'twin'])
        await graph.ranking.incrementBatch(commands.batch({ board, entries: [{ item: 'a', amount: 1 + (n % 4) }] }));
      clock.advanceMs(60_000);
    }
    const entries = BUDGETS.map((most) => ({ item: `g${most}`, amount: most }));
    await graph.ranking.incrementBatch(commands.batch({ board: 'p', entries }));
  }, 60_000);

  afterAll(async () => {
    await service.onApplicationShutdown();
    await redis.stop();
  });

  it.each(BUDGETS)('at %i units a step the item comes out of every slot, its amount counted', async (most) => {
    const board = await graph.cache.get('p');
    const store = graph.module.get(RetractionStore);
    const target = `g${most}`;
    const step = {
      id: `r${most}`,
      target,
      most,
      ledgerWindow: 0,
      blockUntilMs: 0,
      blockKey: target,
      nowMs: clock.nowMs(),
    };
    let reply = await store.step('item', board, board.shards[0], step);
    for (let steps = 1; !reply.done && steps < MOST_STEPS; steps++)
      reply = await store.step('item', board, board.shards[0], step);
    expect([reply.done, reply.amount]).toEqual([true, most]);
    const rows = (await graph.ranking.top('p', 'd', 0, 100)).items;
    expect(rows.map((row) => row.item)).not.toContain(target);
  });

  it('the board then answers what the twin does', async () => {
    const [board, twin] = await Promise.all(['p', 'twin'].map((name) => graph.ranking.top(name, 'd', 0, 100)));
    expect(board.items).toEqual(twin.items);
    expect(twin.items.length).toBeGreaterThan(0);
  });
});
