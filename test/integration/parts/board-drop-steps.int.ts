import { composeRanking, type RankingGraph } from '../../../harness/compose-ranking';
import { FakeClock } from '../../../harness/clock';
import { BOARDS } from '../../../harness/worst-case/boards';
import { startTestRedis, type TestRedis } from '../../../harness/redis';
import { validateConfig } from '../../../src/common/config';
import { BOARD_DROP_KEYS_PER_CALL } from '../../../src/ranking/core/ranking.limits';
import { WriteCommands } from '../../../src/ranking/writes/write-commands';
import { RedisFunctions } from '../../../src/redis/redis-functions';
import { RedisService } from '../../../src/redis/redis.service';
import { RedisSettings } from '../../../src/redis/redis.settings';
import type { Redis } from 'ioredis';
import { seedEveryOptionBoard } from '../../support/board-settings';
import { loggedCalls, logEveryCommand, stopLoggingEveryCommand, type LoggedCall } from '../../support/slowlog';

const T0 = 1_700_002_800_000;
/** Items each in a segment of its own (nearly): a shard of the worst-case harness's 64-shard board at full size. */
const ITEMS = 300;
const SEGMENTS = 250;
/** Names a step tries beyond its budget: its last window's, or the shard's own keys and renamed config. */
const LAST_STEP_NAMES = 64;

/** The names a call's UNLINKs were given. */
const namesOf = ({ commands }: LoggedCall) =>
  commands.filter(([name]) => name.toLowerCase() === 'unlink').reduce((sum, command) => sum + command.length - 1, 0);

/**
 * The drop of a board of many small segments (issue #45: the worst-case harness's 64-shard board of
 * every option, 2 000 segments, ~1 500 a shard at full size, each holding a few small keys in 8
 * windows and 8 views): a step charged only the keys it removed looked into every window of ~9
 * segments, tried ~2 000 names (most of a window's fixed names absent) in ~515 commands for its 1 000
 * keys: 12.6 ms at ci size, 37.8 ms at full size. Each window looked into is charged too, so a step's
 * names and commands follow its budget. Counted without a clock, from the commands each FCALL's script
 * ran (SLOWLOG at 0 µs).
 */
describe('the drop steps of a board of many small segments (single)', () => {
  const clock = new FakeClock(T0);
  let redis: TestRedis;
  let service: RedisService;
  let graph: RankingGraph;

  beforeAll(async () => {
    redis = await startTestRedis('single', { own: true });
    const config = validateConfig({ ...redis.env, REDIS_COMMAND_TIMEOUT_MS: '5000', WRITE_COST_PER_CALL: '1000000' });
    service = new RedisService(RedisSettings.from(config), clock);
    await service.waitUntilReady(10_000);
    graph = await composeRanking(service, new RedisFunctions(service), config, clock);
    const commands = new WriteCommands(clock);
    await seedEveryOptionBoard(graph, commands, 'segs', { items: ITEMS, actors: 30, segments: SEGMENTS });
    const { windows, views, metrics } = BOARDS['wc-metrics'];
    const board = { ...BOARDS['wc-metrics'], windows: [...windows], views: [...views], metrics: [...metrics] };
    await graph.ranking.putBoard({ name: 'metrics', ...board });
    for (const metric of metrics) {
      const entries = Array.from({ length: 20 }, (_, n) => ({ item: `i${n}`, amount: 1 + n, metric }));
      await graph.ranking.incrementBatch(commands.batch({ board: 'metrics', entries }));
    }
  }, 60_000);
  afterAll(async () => {
    await graph.boards.onApplicationShutdown();
    await service.onApplicationShutdown();
    await redis.stop();
  });

  it('tries about its budget of names in each step, in a few commands, and every key goes', async () => {
    const node = redis.client as Redis;
    for (const board of ['segs', 'metrics']) {
      await logEveryCommand(node);
      await graph.ranking.deleteBoard(board);
      await graph.boards.drops.settled();
      const steps = (await loggedCalls(node)).filter(({ call }) => /_board_drop_step$/.test(String(call[1])));
      await stopLoggingEveryCommand(node);
      expect(steps.length).toBeGreaterThan(2);
      // Before, segments: ~2 000 names in ~515 commands a step (budget 1 000), now ~270 in ~75; metrics:
      // every step looked into the 64 windows again, ~1 300 names (also when a step's looks were charged:
      // they took its whole budget before any progress, and the drop never ended).
      expect(Math.max(...steps.map(namesOf))).toBeLessThanOrEqual(BOARD_DROP_KEYS_PER_CALL + LAST_STEP_NAMES);
      expect(Math.max(...steps.map(({ commands }) => commands.length))).toBeLessThanOrEqual(
        BOARD_DROP_KEYS_PER_CALL / 2,
      );
      expect(await redis.dataKeys(`board:${board}*`)).toEqual([]);
    }
  }, 120_000);
});
