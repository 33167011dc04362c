import { validateConfig } from '../../src/common/config';
import { FiltersService } from '../../src/ranking/filters/filters.service';
import {
  EXCLUDE_GROUPS_MAX,
  EXCLUDE_ITEMS_MAX,
  FILTERED_DEPTH_ITEMS,
} from '../../src/ranking/options/groups/groups.limits';
import { RankingService } from '../../src/ranking/ranking.service';
import { WriteCommands } from '../../src/ranking/writes/write-commands';
import { RedisFunctions } from '../../src/redis/redis-functions';
import { RedisService } from '../../src/redis/redis.service';
import { RedisSettings } from '../../src/redis/redis.settings';
import { FakeClock } from '../../harness/clock';
import { composeRanking } from '../../harness/compose-ranking';
import { startTestRedis, TestRedis } from '../../harness/redis';

/**
 * Issue #49: a viewer's EXCLUDE_ITEMS_MAX excluded items and EXCLUDE_GROUPS_MAX excluded groups still
 * give a full page of FILTERED_DEPTH_ITEMS rows in one round trip per shard. The head of the board is
 * all excluded (900 items by id, 100 by their group; 100 more ids are of items not on the board), so the
 * page is the next 1 000 rows at their board ranks. The group_page calls are counted from the FCALLs
 * Redis ran (SLOWLOG at 0 µs) on a server of the test's own.
 */
const T0 = 1_700_020_000_000;
const HEAD = 1_000;
const BY_GROUP = EXCLUDE_GROUPS_MAX;
const PAGE = FILTERED_DEPTH_ITEMS;
const KEPT_GROUPS = 50;

/** id, time, µs, arguments, client address, client name. */
type SlowlogEntry = [number, number, number, string[], string, string];

/** The board's items, best first: the excluded head, then the page, then 100 rows after it. */
function seedEntries(): Array<{ item: string; amount: number; group: string }> {
  const head = Array.from({ length: HEAD }, (_, n) => ({
    item: `h${n}`,
    amount: 5_000 - n,
    group: n < HEAD - BY_GROUP ? `k${n % KEPT_GROUPS}` : `g${n - (HEAD - BY_GROUP)}`,
  }));
  const rest = Array.from({ length: PAGE + 100 }, (_, n) => ({
    item: `p${n}`,
    amount: 3_000 - n,
    group: `k${n % KEPT_GROUPS}`,
  }));
  return [...head, ...rest];
}

describe('a filtered page past the most exclusions (single, own server)', () => {
  const clock = new FakeClock(T0);
  let redis: TestRedis;
  let redisService: RedisService;
  let ranking: RankingService;
  let filters: FiltersService;
  let commands: WriteCommands;

  beforeAll(async () => {
    redis = await startTestRedis('single', { own: true });
    const config = validateConfig({ ...redis.env, REDIS_COMMAND_TIMEOUT_MS: '5000' });
    redisService = new RedisService(RedisSettings.from(config), clock);
    await redisService.waitUntilReady(10_000);
    const graph = await composeRanking(redisService, new RedisFunctions(redisService), config, clock);
    ranking = graph.ranking;
    filters = graph.module.get(FiltersService);
    commands = graph.module.get(WriteCommands);
  });
  afterAll(async () => {
    await redisService?.onApplicationShutdown();
    await redis?.stop();
  });

  async function groupPageCalls(): Promise<number> {
    const entries = (await redis.client.slowlog('GET', 100_000)) as SlowlogEntry[];
    return entries.filter(([, , , args]) => /group_page$/.test(String(args[1]))).length;
  }

  it.each([1, 3])(
    '%i shard(s): 1 000 excluded items and 100 excluded groups, a full page of 1 000 rows in one group_page call per shard',
    async (shards) => {
      const board = `ex${shards}`;
      const windows = [{ name: 'w', period: 3600, interval: 60 }];
      await ranking.putBoard({ name: board, windows, shards, groups: true });
      const entries = seedEntries();
      for (let first = 0; first < entries.length; first += 500)
        await ranking.incrementBatch(commands.batch({ board, entries: entries.slice(first, first + 500) }));
      // The first read drains and registers the board: not counted.
      await ranking.top(board, 'w', 0, 1);

      const excludeItems = [
        ...Array.from({ length: HEAD - BY_GROUP }, (_, n) => `h${n}`),
        ...Array.from({ length: EXCLUDE_ITEMS_MAX - (HEAD - BY_GROUP) }, (_, n) => `gone${n}`),
      ];
      const excludeGroups = Array.from({ length: BY_GROUP }, (_, n) => `g${n}`);
      await redis.client.config('SET', 'slowlog-log-slower-than', '0');
      await redis.client.config('SET', 'slowlog-max-len', '100000');
      await redis.client.slowlog('RESET');
      const page = await filters.read({ board, window: 'w', offset: 0, limit: PAGE, excludeItems, excludeGroups });
      const calls = await groupPageCalls();
      await redis.client.config('SET', 'slowlog-log-slower-than', '10000');

      const want = entries.slice(HEAD, HEAD + PAGE).map((e, n) => [HEAD + n + 1, e.item, e.amount, e.group]);
      expect(excludeItems).toHaveLength(EXCLUDE_ITEMS_MAX);
      expect(page.truncated).toBe(false);
      expect(page.items.map((row) => [row.rank, row.item, row.score, row.group])).toEqual(want);
      expect(calls).toBe(shards);
      await ranking.deleteBoard(board);
    },
    120_000,
  );
});
