import { validateConfig } from '../../../src/common/config';
import { ConflictError, QuotaExceededError } from '../../../src/common/errors';
import { CountersService } from '../../../src/counters/counters.service';
import { CounterStore } from '../../../src/counters/counters.store';
import { GrowthKind } from '../../../src/common/growth-kinds';
import { RankingService } from '../../../src/ranking/ranking.service';
import { shardOf } from '../../../src/ranking/core/shard-math';
import { RedisService } from '../../../src/redis/redis.service';
import { COUNTER_EXPIRY_GRACE_MS } from '../../../src/counters/counters.limits';
import { RedisSettings } from '../../../src/redis/redis.settings';
import { RedisFunctions } from '../../../src/redis/redis-functions';
import { StatsService } from '../../../src/stats/stats.service';
import { StatsStore } from '../../../src/stats/stats.store';
import { FakeClock } from '../../../harness/clock';
import { rankingServiceOn } from '../../../harness/ranking';
import { startTestRedis, TestRedis, TOPOLOGIES } from '../../../harness/redis';
import { CountersSettings } from '../../../src/counters/counters.settings';
import { StatsSettings } from '../../../src/stats/stats.settings';
import { clientBudget } from '../../support/growth';

const T0 = 1_700_002_800_000; // an hour boundary (unix ms)
const HOUR_MS = 3_600_000;
const WINDOWS = [{ period: '1h', interval: '1m' }];

describe.each(TOPOLOGIES)('quotas on growth, caps and aging out (real Redis, %s)', (topology) => {
  let redis: TestRedis;
  let service: RedisService;
  let ranking: RankingService;
  let counterStore: CounterStore;
  let counters: CountersService;
  let statsStore: StatsStore;
  let stats: StatsService;
  const clock = new FakeClock(T0);

  /** An anonymous client's budgets: `limits` per hour (kinds left out have no quota). */
  const budgetOf = (limits: Partial<Record<GrowthKind, number>>, client = 'ip:203.0.113.7') =>
    clientBudget(limits, clock, client, 100);
  const score = async (board: string, item: string) => (await ranking.item(board, undefined, item)).score;

  beforeAll(async () => {
    redis = await startTestRedis(topology);
    // Counters: precisions 1 s and 60 s, 10 samples (retentions 10 s and 600 s), one index bucket.
    const config = validateConfig({
      ...redis.env,
      REDIS_COMMAND_TIMEOUT_MS: '5000',
      COUNTER_PRECISIONS: '1,60',
      COUNTER_SAMPLES: '10',
      COUNTER_INDEX_BUCKETS: '1',
      MAX_COUNTERS: '3',
      MAX_STATS_PAIRS: '3',
    });
    service = new RedisService(RedisSettings.from(config), clock);
    await service.waitUntilReady(10_000);
    const functions = new RedisFunctions(service);
    ranking = await rankingServiceOn(service, functions, config, clock);
    counterStore = new CounterStore(service, functions, CountersSettings.from(config));
    counters = new CountersService(counterStore, clock);
    statsStore = new StatsStore(service, functions, StatsSettings.from(config));
  });
  afterAll(async () => {
    await service.onApplicationShutdown();
    await redis.stop();
  });
  beforeEach(async () => {
    await redis.clear();
    clock.setMs(T0);
    stats = new StatsService(statsStore, clock); // a fresh in-process index cache
  });

  describe('board items', () => {
    beforeEach(async () => {
      await ranking.putBoard({ name: 'q', windows: WINDOWS });
    });

    it('an anonymous creator hits its quota of new items (429, Retry-After) while its existing items keep counting', async () => {
      const budget = budgetOf({ items: 3 });
      for (const item of ['a', 'b', 'c']) await ranking.increment('q', item, 1, undefined, budget);
      const refused = ranking.increment('q', 'd', 1, undefined, budget);
      await expect(refused).rejects.toThrow(QuotaExceededError);
      // one item back per 1200 s (3 per hour)
      await expect(refused).rejects.toMatchObject({ code: 'QUOTA_EXCEEDED', retryAfterSec: 1200 });
      await ranking.increment('q', 'a', 5, undefined, budget);
      expect(await score('q', 'a')).toBe(6);
      // A batch with one new item is refused whole; one of existing items is applied.
      await expect(
        ranking.incrementBatch(
          'q',
          [
            { item: 'a', amount: 1 },
            { item: 'e', amount: 1 },
          ],
          undefined,
          budget,
        ),
      ).rejects.toMatchObject({ code: 'QUOTA_EXCEEDED' });
      expect(await score('q', 'a')).toBe(6);
      expect(await score('q', 'e')).toBe(0);
      const batch = await ranking.incrementBatch(
        'q',
        [
          { item: 'a', amount: 1 },
          { item: 'b', amount: 2 },
        ],
        undefined,
        budget,
      );
      expect(batch.body.count).toBe(2);
      expect(await score('q', 'b')).toBe(3);
      // Other clients have budgets of their own, and the budget refills with time.
      await ranking.increment('q', 'd', 1, undefined, budgetOf({ items: 3 }, 'ip:198.51.100.1'));
      clock.advanceSec(1200);
      await ranking.increment('q', 'e', 1, undefined, budget);
      expect((await ranking.top('q', undefined, 0, 10)).items.map((row) => row.item).sort()).toEqual([
        'a',
        'b',
        'c',
        'd',
        'e',
      ]);
    });

    it('charges only what a write created: repeats of an item in a batch count once, a refused write nothing', async () => {
      const budget = budgetOf({ items: 2 });
      const batch = [
        { item: 'x', amount: 1 },
        { item: 'x', amount: 2 },
        { item: 'y', amount: 1 },
      ];
      await ranking.incrementBatch('q', batch, undefined, budget);
      expect(await score('q', 'x')).toBe(3);
      await expect(ranking.increment('q', 'z', 1, undefined, budget)).rejects.toThrow(QuotaExceededError);
      await expect(ranking.increment('q', 'z', 1, undefined, budget)).rejects.toThrow(QuotaExceededError);
      clock.advanceSec(1800); // one back
      await ranking.increment('q', 'z', 1, undefined, budget);
    });

    it('new likes have a quota of their own; a repeated like and an unlike are never refused', async () => {
      const budget = budgetOf({ likeUsers: 2 });
      await ranking.like('q', 'p', 'u1', false, undefined, budget);
      await ranking.like('q', 'p', 'u2', false, undefined, budget);
      await expect(ranking.like('q', 'p', 'u3', false, undefined, budget)).rejects.toMatchObject({
        code: 'QUOTA_EXCEEDED',
        message: expect.stringContaining('new likes'),
      });
      expect((await ranking.like('q', 'p', 'u1', false, undefined, budget)).body.counted).toBe(false);
      expect((await ranking.like('q', 'p', 'u1', true, undefined, budget)).body.counted).toBe(true);
      expect(await score('q', 'p')).toBe(1);
    });

    it('retry-safe writes: a refused keyed write applies once its budget is back; an applied one replays when it is spent', async () => {
      const budget = budgetOf({ items: 1 });
      const first = await ranking.increment('q', 'k1', 1, 'key-1', budget);
      await expect(ranking.increment('q', 'k2', 1, 'key-2', budget)).rejects.toThrow(QuotaExceededError);
      const again = await ranking.increment('q', 'k1', 1, 'key-1', budget);
      expect(again).toEqual({ ...first, replayed: true });
      clock.advanceSec(3600);
      expect((await ranking.increment('q', 'k2', 1, 'key-2', budget)).replayed).toBe(false);
      expect((await ranking.increment('q', 'k2', 1, 'key-2', budget)).replayed).toBe(true);
      expect(await score('q', 'k2')).toBe(1);
    });
  });

  describe('a board with maxItems', () => {
    it('refuses the (maxItems+1)-th new item with BOARD_FULL, keeps counting existing ones, and takes new ones once items leave', async () => {
      expect((await ranking.putBoard({ name: 'm', windows: WINDOWS, maxItems: 3 })).board.maxItems).toBe(3);
      for (const item of ['a', 'b', 'c']) await ranking.increment('m', item, 1);
      await expect(ranking.increment('m', 'd', 1)).rejects.toThrow(ConflictError);
      await expect(ranking.increment('m', 'd', 1)).rejects.toMatchObject({
        code: 'BOARD_FULL',
        message:
          'board "m" is full: it holds 3 of its maxItems 3 items and the write would add 1 new; existing items keep counting',
      });
      await expect(
        ranking.incrementBatch('m', [
          { item: 'a', amount: 1 },
          { item: 'd', amount: 1 },
        ]),
      ).rejects.toMatchObject({ code: 'BOARD_FULL' });
      await expect(ranking.like('m', 'd', 'u', false)).rejects.toMatchObject({ code: 'BOARD_FULL' });
      await ranking.increment('m', 'a', 4);
      await ranking.like('m', 'b', 'u', false);
      expect([await score('m', 'a'), await score('m', 'b'), await score('m', 'd')]).toEqual([5, 2, 0]);
      // A PUT without maxItems keeps it; a larger one lets one more in.
      expect((await ranking.putBoard({ name: 'm', windows: WINDOWS })).board.maxItems).toBe(3);
      await expect(ranking.increment('m', 'd', 1)).rejects.toMatchObject({ code: 'BOARD_FULL' });
      await ranking.putBoard({ name: 'm', windows: WINDOWS, maxItems: 4 });
      await ranking.increment('m', 'd', 1);
      await expect(ranking.increment('m', 'e', 1)).rejects.toMatchObject({ code: 'BOARD_FULL' });
      // Once the window has moved past every item, the board holds none and takes new ones.
      clock.advanceSec(3660);
      await ranking.increment('m', 'e', 1);
      expect((await ranking.top('m', undefined, 0, 10)).items.map((row) => row.item)).toEqual(['e']);
    });

    it('a sharded board holds ceil(maxItems / shards) per shard; a batch refused on one shard is a BATCH_PARTIAL', async () => {
      await ranking.putBoard({ name: 'sh', windows: WINDOWS, shards: 2, maxItems: 3 }); // 2 per shard
      const on = (shard: number, count: number, from = 0) =>
        Array.from({ length: 400 }, (_, i) => `item-${i}`)
          .filter((id) => shardOf(id, 2) === shard)
          .slice(from, from + count);
      for (const item of [...on(0, 2), ...on(1, 1)]) await ranking.increment('sh', item, 1);
      await expect(ranking.increment('sh', on(0, 1, 2)[0], 1)).rejects.toMatchObject({
        code: 'BOARD_FULL',
        message: expect.stringContaining('holds 2 of its 2 items (maxItems split over 2 shards)'),
      });
      const batch = [...on(0, 1, 2), ...on(1, 1, 1), ...on(0, 1)].map((item) => ({ item, amount: 1 }));
      await expect(ranking.incrementBatch('sh', batch)).rejects.toMatchObject({
        code: 'BATCH_PARTIAL',
        message: expect.stringContaining('1 of 3 entries applied, 2 not (board "sh" is full'),
      });
      expect(await score('sh', on(1, 1, 1)[0])).toBe(1);
      expect(await score('sh', on(0, 1)[0])).toBe(1);
    });
  });

  describe('counters', () => {
    it('an anonymous creator hits its quota of new counters while its counters keep counting', async () => {
      const budget = budgetOf({ counters: 2 });
      await counters.increment('c1', 1, undefined, undefined, budget);
      await counters.increment('c2', 1, undefined, undefined, budget);
      await expect(counters.increment('c3', 1, undefined, undefined, budget)).rejects.toMatchObject({
        code: 'QUOTA_EXCEEDED',
        retryAfterSec: 1800,
      });
      await counters.increment('c1', 4, undefined, undefined, budget);
      expect((await counters.read('c1', '60')).samples).toEqual([{ t: T0 / 1000, count: 5 }]);
      await expect(counters.read('c3', '60')).rejects.toMatchObject({ code: 'COUNTER_NOT_FOUND' });
    });

    it('MAX_COUNTERS caps live counters (409 CAPACITY_REACHED); a counter past every retention no longer counts', async () => {
      for (const name of ['a', 'b', 'c']) await counters.increment(name);
      await expect(counters.increment('d')).rejects.toMatchObject({
        code: 'CAPACITY_REACHED',
        message: expect.stringContaining('(3 of 3, MAX_COUNTERS 3 split over 1 index buckets)'),
      });
      await counters.increment('a', 2);
      clock.advanceSec(300);
      await counters.increment('b'); // b lives on; a and c leave every retention at T0 + 600 s
      clock.advanceSec(301);
      await counters.increment('d');
      await counters.increment('e');
      await expect(counters.increment('f')).rejects.toMatchObject({ code: 'CAPACITY_REACHED' });
    });

    it('ages out without an admin call: hashes expire with their newest slice, the cleaner removes the index entries', async () => {
      await counters.increment('old');
      const bucket = counterStore.keys.bucketOf('old');
      const ttl1 = await redis.client.pttl(counterStore.keys.count('old', 1));
      const ttl60 = await redis.client.pttl(counterStore.keys.count('old', 60));
      expect(ttl1).toBeGreaterThan(9_000 + COUNTER_EXPIRY_GRACE_MS);
      expect(ttl1).toBeLessThanOrEqual(10_000 + COUNTER_EXPIRY_GRACE_MS);
      expect(ttl60).toBeGreaterThan(599_000 + COUNTER_EXPIRY_GRACE_MS);
      expect(ttl60).toBeLessThanOrEqual(600_000 + COUNTER_EXPIRY_GRACE_MS);
      clock.advanceSec(30);
      await counters.increment('old', 1, T0 / 1000); // a late sample never shortens the life of newer slices
      expect(await redis.client.pttl(counterStore.keys.count('old', 60))).toBeGreaterThan(
        599_000 - 30_000 + COUNTER_EXPIRY_GRACE_MS,
      );
      clock.advanceSec(600);
      const pass = await counters.cleanPass(0);
      expect(pass).toMatchObject({ entriesRemoved: 2, namesRemoved: 1, failures: 0 });
      expect(await redis.client.zcard(counterStore.keys.known(bucket))).toBe(0);
      expect(await redis.client.zcard(counterStore.keys.names(bucket))).toBe(0);
      expect(await redis.dataKeys('cnt:*')).toEqual([]);
    });

    it('a sample about to leave its retention keeps its hash for the grace: Redis times the TTL by its own clock', async () => {
      const nowSec = Math.floor(clock.nowMs() / 1000);
      await counters.increment('edge', 1, nowSec - 9); // its 1 s slice leaves the retention within a second
      expect(await redis.client.pttl(counterStore.keys.count('edge', 1))).toBeGreaterThan(COUNTER_EXPIRY_GRACE_MS);
      expect((await counters.read('edge', '1')).samples).toEqual([{ t: nowSec - 9, count: 1 }]);
    });

    it('a keyed increment refused for its quota still answers its stored first answer', async () => {
      const budget = budgetOf({ counters: 1 });
      const first = await counters.increment('k', 1, undefined, 'ck-1', budget);
      clock.advanceSec(700); // k leaves every retention: a repeat would create it anew, and the quota is spent
      expect(await counters.increment('k', 1, undefined, 'ck-1', budget)).toEqual({ ...first, replayed: true });
    });
  });

  describe('stats pairs', () => {
    it('an anonymous creator hits its quota of new pairs while its pairs keep recording', async () => {
      const budget = budgetOf({ statsPairs: 2 });
      await stats.record('ctx', 'A', 1, undefined, budget);
      await stats.record('ctx', 'B', 1, undefined, budget);
      await expect(stats.record('ctx', 'C', 1, undefined, budget)).rejects.toMatchObject({ code: 'QUOTA_EXCEEDED' });
      await stats.record('ctx', 'A', 2, undefined, budget);
      expect((await stats.read('ctx', 'A')).count).toBe(2);
      await expect(stats.read('ctx', 'C')).rejects.toMatchObject({ code: 'STATS_NOT_FOUND' });
      // another instance (no cache of what was indexed) sees the same pairs as existing
      expect((await new StatsService(statsStore, clock).record('ctx', 'B', 3, undefined, budget)).body.count).toBe(2);
    });

    it('MAX_STATS_PAIRS caps the pairs recorded this or last hour (409 CAPACITY_REACHED)', async () => {
      for (const type of ['A', 'B', 'C']) await stats.record('ctx', type, 1);
      await expect(stats.record('ctx', 'D', 1)).rejects.toMatchObject({ code: 'CAPACITY_REACHED' });
      await stats.record('ctx', 'A', 1);
      clock.advanceMs(HOUR_MS);
      await stats.record('ctx', 'A', 1); // A lives on into this hour; B and C are last hour's
      await expect(stats.record('ctx', 'D', 1)).rejects.toMatchObject({ code: 'CAPACITY_REACHED' });
      clock.advanceMs(HOUR_MS);
      await stats.record('ctx', 'D', 1);
      await stats.record('ctx', 'E', 1);
      expect((await stats.list(0, 10)).total).toBe(3);
    });

    it('the index is pruned by the job in bounded steps, never a pair recorded again meanwhile', async () => {
      // listed as the access-time recorder lists its pairs (no cap: the service's own)
      const hourStart = T0 / 1000;
      await statsStore.addToIndex(['A', 'B', 'C', 'D', 'E'].map((type) => ({ context: 'x', type, hourStart })));
      clock.advanceMs(HOUR_MS);
      expect(await stats.pruneIndex(2, 10)).toEqual({ removed: 0, steps: 1 }); // last hour's pairs are live
      clock.advanceMs(HOUR_MS);
      await stats.record('x', 'E', 1);
      expect(await stats.pruneIndex(2, 1)).toEqual({ removed: 2, steps: 1 });
      expect(await redis.client.zcard(statsStore.keys.index())).toBe(3);
      expect(await stats.pruneIndex(2, 10)).toEqual({ removed: 2, steps: 2 });
      expect(await redis.client.zrange(statsStore.keys.index(), 0, -1)).toEqual(['x\tE']);
    });

    it('a keyed record refused for a new pair still answers its stored first answer', async () => {
      const budget = budgetOf({ statsPairs: 1 });
      const first = await stats.record('ctx', 'K', 1, 'sk-1', budget);
      clock.advanceMs(3 * HOUR_MS); // the pair is gone: a repeat would be a new pair, and the quota is spent
      await stats.record('ctx', 'L', 1, undefined, budget); // takes the budget back by then
      expect(await stats.record('ctx', 'K', 1, 'sk-1', budget)).toEqual({ ...first, replayed: true });
      await expect(stats.record('ctx', 'K', 1, 'sk-2', budget)).rejects.toMatchObject({ code: 'QUOTA_EXCEEDED' });
    });
  });
});
