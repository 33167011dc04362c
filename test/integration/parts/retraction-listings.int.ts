import { validateConfig } from '../../../src/common/config';
import { composeRanking, RankingGraph } from '../../../harness/compose-ranking';
import { RetractionStore } from '../../../src/ranking/retraction/retraction.store';
import { WriteCommands } from '../../../src/ranking/writes/write-commands';
import { RedisFunctions } from '../../../src/redis/redis-functions';
import { RedisService } from '../../../src/redis/redis.service';
import { RedisSettings } from '../../../src/redis/redis.settings';
import { FakeClock } from '../../../harness/clock';
import { startTestRedis, TestRedis } from '../../../harness/redis';

const T0 = 1_700_000_040_000;
const MINUTE_MS = 60_000;
const TOP = 1000;
const ITEMS = 1200;
const BOUNDARIES = 6;

/**
 * An item's retraction rewrites every kept snapshot listing it, renumbering the rows after it. A
 * listing of 1 000 rows renumbered in Lua takes about as long as ~450 Redis commands, so a step weighs
 * each row it renumbers (actor_lib's STEP.LISTING_ROWS): a step rewrites one such listing, not the five
 * it did at 6 units per 100 rows (8.6 ms a step on the 8-metric board of the worst-case harness).
 */
describe('the listings an item retraction step rewrites (single)', () => {
  const clock = new FakeClock(T0);
  const commands = new WriteCommands(clock);
  let redis: TestRedis;
  let service: RedisService;
  let graph: RankingGraph;
  let store: RetractionStore;

  beforeAll(async () => {
    redis = await startTestRedis('single');
    const config = validateConfig({ ...redis.env, REDIS_COMMAND_TIMEOUT_MS: '5000' });
    service = new RedisService(RedisSettings.from(config), clock);
    await service.waitUntilReady(10_000);
    graph = await composeRanking(service, new RedisFunctions(service), config, clock);
    store = graph.module.get(RetractionStore);
    await graph.ranking.putBoard({
      name: 'l',
      windows: [{ name: 'h', period: '1h', interval: '1m', snapshots: { keep: 10, top: TOP } }],
    });
    for (let first = 0; first < ITEMS; first += 200) {
      const entries = Array.from({ length: 200 }, (_, k) => ({ item: `i${first + k}`, amount: ITEMS - first - k }));
      await graph.ranking.incrementBatch(commands.batch({ board: 'l', entries }));
    }
    // Each boundary crossed by a write: a snapshot of the 1 000 best, `i0` (the one retracted) first.
    for (let boundary = 0; boundary < BOUNDARIES; boundary++) {
      clock.advanceMs(MINUTE_MS);
      await graph.ranking.incrementBatch(commands.batch({ board: 'l', entries: [{ item: 'i1', amount: 1 }] }));
    }
  });

  afterAll(async () => {
    await service.onApplicationShutdown();
    await redis.stop();
  });

  /** SETs Redis ran (INFO commandstats): a retraction step rewrites a listing with one. */
  async function setsRun(): Promise<number> {
    const info = await redis.client.info('commandstats');
    return Number(/cmdstat_set:calls=(\d+)/.exec(info)?.[1] ?? 0);
  }

  it('each step rewrites one listing of 1 000 rows at most, and every snapshot loses the item', async () => {
    const board = await graph.cache.get('l');
    const perStep: number[] = [];
    for (let done = false; !done && perStep.length < 100;) {
      const before = await setsRun();
      const reply = await store.step('item', board, board.shards[0], {
        id: 'r-listings',
        target: 'i0',
        most: store.stepUnits,
        ledgerWindow: 0,
        blockUntilMs: 0,
        blockKey: 'i0',
        nowMs: clock.nowMs(),
      });
      perStep.push((await setsRun()) - before);
      done = reply.done;
    }
    expect(perStep.reduce((sum, sets) => sum + sets, 0)).toBe(BOUNDARIES);
    expect(Math.max(...perStep)).toBe(1);
    const listings = await redis.client.keys('*snap:*');
    expect(listings).toHaveLength(BOUNDARIES);
    for (const key of listings) expect(await redis.client.get(key)).not.toContain('\u001ei0\u001f');
  });
});
