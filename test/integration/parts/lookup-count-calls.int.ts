import type { Cluster, Redis } from 'ioredis';
import { FakeClock } from '../../../harness/clock';
import { startRankingService } from '../../../harness/ranking';
import { startTestRedis, TestRedis } from '../../../harness/redis';
import { LOOKUP_NODE_UNITS_PER_CALL } from '../../../src/ranking/core/ranking.limits';
import { LoggedCall, loggedCalls, logEveryCommand, stopLoggingEveryCommand } from '../../support/slowlog';

/**
 * A lookup on a 64-shard `ties: first` board over a Cluster of three masters (issue #45): its board
 * ranks' counts go in lookup_count_shards calls per node, sized by LOOKUP_COUNTS_PER_CALL counts
 * (31 ids on 5 shards a call, 305 commands in the abuse run); they now weigh each shard's reads too,
 * in LOOKUP_NODE_UNITS_PER_CALL units as lookup_node's (a command each at most), the answers those
 * of a one-shard twin. Counted from the commands each FCALL's script ran (SLOWLOG at 0 µs), without a clock.
 */
const T0 = 1_699_999_980_000;
const SHARDS = 64;
const ITEMS = 640;
/** The most ids the cost cap takes on such a board (6 000 / (64 x 3)). */
const IDS = Array.from({ length: 31 }, (_, n) => `i${(n * 7) % ITEMS}`);
/** Shards of the board whose lookup counts more scores than one shard's call takes (65 on `ties: first`). */
const FEW_SHARDS = 8;
/** Ids of distinct scores within the cost cap on that board (160 x 8 x 3 of 6 000 counts). */
const APART_IDS = Array.from({ length: 160 }, (_, n) => `i${(n * 3) % ITEMS}`);

describe('the count calls of a lookup on a 64-shard ties: first board (cluster)', () => {
  const clock = new FakeClock(T0);
  let redis: TestRedis;
  let started: Awaited<ReturnType<typeof startRankingService>>;
  let masters: Redis[];

  beforeAll(async () => {
    // A Cluster of its own: the test reads every command its masters ran from their SLOWLOGs.
    redis = await startTestRedis('cluster', { own: true });
    started = await startRankingService(redis, clock);
    masters = (redis.client as Cluster).nodes('master');
    const windows = [{ name: 'm', period: 3600, interval: 60 }];
    await started.ranking.putBoard({ name: 'one', windows, ties: 'first' });
    await started.ranking.putBoard({ name: 'many', windows, ties: 'first', shards: SHARDS });
    await started.ranking.putBoard({ name: 'apart', windows, ties: 'first' });
    await started.ranking.putBoard({ name: 'few', windows, ties: 'first', shards: FEW_SHARDS });
    // Seven scores: every id ties with items of every shard, its rank read from the tie marks' order.
    const entries = Array.from({ length: ITEMS }, (_, n) => ({ item: `i${n}`, amount: 1 + (n % 7) }));
    for (let k = 0; k < ITEMS; k += 7) {
      for (const name of ['one', 'many']) await started.ranking.incrementBatch(name, entries.slice(k, k + 7));
      clock.advanceMs(1);
    }
    // Every item a score of its own: as many scores to count as ids.
    const apart = Array.from({ length: ITEMS }, (_, n) => ({ item: `i${n}`, amount: 1 + n }));
    for (let k = 0; k < ITEMS; k += 320)
      for (const name of ['apart', 'few']) await started.ranking.incrementBatch(name, apart.slice(k, k + 320));
    clock.advanceMs(1_000);
  });

  /** The commands each call of a lookup of `ids` on board `name` ran, and the rows it answered. */
  async function loggedLookup(name: string, ids: string[]) {
    await Promise.all(masters.map(logEveryCommand));
    const looked = await started.lookup.lookup({ name, window: 'm', items: ids, relative: false, withData: true });
    const logged: LoggedCall[] = (await Promise.all(masters.map(loggedCalls))).flat();
    await Promise.all(masters.map(stopLoggingEveryCommand));
    return { looked, calls: logged.filter(({ call }) => /_lookup(_count_shards)?$/.test(String(call[1]))) };
  }
  afterAll(async () => {
    await started.redisService.onApplicationShutdown();
    await redis.stop();
  });

  it('counts the most ids the cost cap takes (31), with data, in calls of at most LOOKUP_NODE_UNITS_PER_CALL commands, as one shard ranks them', async () => {
    const expected = await started.lookup.lookup({
      name: 'one',
      window: 'm',
      items: IDS,
      relative: false,
      withData: true,
    });
    const { looked, calls } = await loggedLookup('many', IDS);
    const counts = calls.filter(({ call }) => /_lookup_count_shards$/.test(String(call[1])));
    expect(looked.items).toEqual(expected.items);
    expect(looked.items.every((row) => row.rank !== null)).toBe(true);
    expect(counts.length).toBeGreaterThanOrEqual(masters.length);
    // Before: 5 shards a call, about 65 commands each (325 a call here, 305 in the abuse run).
    expect(Math.max(...calls.map(({ commands }) => commands.length))).toBeLessThanOrEqual(LOOKUP_NODE_UNITS_PER_CALL);
  });

  it('counts 160 scores on 8 shards in parts of the scores, each call within LOOKUP_NODE_UNITS_PER_CALL commands, as one shard ranks them', async () => {
    const ask = { window: 'm', items: APART_IDS, relative: false, withData: true };
    const expected = await started.lookup.lookup({ name: 'apart', ...ask });
    const { looked, calls } = await loggedLookup('few', APART_IDS);
    expect(looked.items).toEqual(expected.items);
    expect(new Set(looked.items.map((row) => row.rank)).size).toBe(APART_IDS.length);
    // Before: a call per shard counting all 160 scores.
    expect(Math.max(...calls.map(({ commands }) => commands.length))).toBeLessThanOrEqual(LOOKUP_NODE_UNITS_PER_CALL);
  });
});
