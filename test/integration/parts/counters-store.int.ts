import { UNLIMITED } from '../../../src/governance/growth-quota';
import { FakeClock } from '../../../harness/clock';
import { validateConfig } from '../../../src/common/config';
import { InvalidInputError, NotFoundError } from '../../../src/common/errors';
import { CounterKeys } from '../../../src/counters/counter-keys';
import { CountersService } from '../../../src/counters/counters.service';
import { CounterStore } from '../../../src/counters/counters.store';
import { RedisService } from '../../../src/redis/redis.service';
import { RedisSettings } from '../../../src/redis/redis.settings';
import { RedisFunctions } from '../../../src/redis/redis-functions';
import { startTestRedis, TestRedis, TOPOLOGIES } from '../../../harness/redis';
import { CountersSettings } from '../../../src/counters/counters.settings';

const T0 = 1_700_000_000_000; // unix ms; 1_700_000_000 is a multiple of 5 and 100 s (its 300 s slice starts at T0 - 200)
const T0_SEC = T0 / 1000;

describe.each(TOPOLOGIES)('counter scripts through the store (real Redis, %s)', (topology) => {
  let redis: TestRedis;
  let service: RedisService;
  let store: CounterStore;
  let counters: CountersService;
  let keys: CounterKeys;
  const clock = new FakeClock(T0);
  const hash = (name: string, p: number) => redis.client.hgetall(keys.count(name, p));
  const known = (name: string) => redis.client.zrange(keys.knownOf(name), 0, -1);

  beforeAll(async () => {
    redis = await startTestRedis(topology);
    // 4 samples: retentions of 4 s, 20 s, 400 s and 1200 s.
    const config = validateConfig({
      ...redis.env,
      REDIS_COMMAND_TIMEOUT_MS: '5000',
      COUNTER_PRECISIONS: '1,5,100,300',
      COUNTER_SAMPLES: '4',
      COUNTER_INDEX_BUCKETS: '4',
      COUNTER_CLEAN_BATCH: '2',
    });
    service = new RedisService(RedisSettings.from(config), clock);
    await service.waitUntilReady(5000);
    store = new CounterStore(service, new RedisFunctions(service), CountersSettings.from(config));
    keys = store.keys;
    counters = new CountersService(store, clock);
  });
  afterAll(async () => {
    await service.onApplicationShutdown();
    await redis.stop();
  });
  beforeEach(async () => {
    await redis.clear();
    clock.setMs(T0);
  });

  describe('increment', () => {
    it('adds to the current slice at every precision and indexes each precision, in its bucket', async () => {
      clock.setMs(T0 + 7_300);
      expect((await store.increment('hits', clock.nowMs(), T0_SEC + 7, 3, UNLIMITED)).value).toEqual([1, 5, 100, 300]);
      expect((await counters.increment('hits', 2)).body).toEqual({
        name: 'hits',
        count: 2,
        at: T0_SEC + 7,
        precisions: [1, 5, 100, 300],
      });
      expect(await hash('hits', 1)).toEqual({ [T0_SEC + 7]: '5' });
      expect(await hash('hits', 5)).toEqual({ [T0_SEC + 5]: '5' });
      expect(await hash('hits', 100)).toEqual({ [T0_SEC]: '5' });
      expect(await hash('hits', 300)).toEqual({ [T0_SEC - 200]: '5' });
      expect(await known('hits')).toEqual(['100:hits', '1:hits', '300:hits', '5:hits']);
      const tag = `{${redis.prefix}cnt:${keys.bucketOf('hits')}}`;
      expect((await redis.dataKeys('*')).sort()).toEqual(
        [
          `${tag}:count:100:hits`,
          `${tag}:count:1:hits`,
          `${tag}:count:300:hits`,
          `${tag}:count:5:hits`,
          `${tag}:known`,
          `${tag}:names`,
        ].sort(),
      );
    });

    it('lands a late sample only at the precisions that still keep it, and counts negative amounts', async () => {
      // at = now - 10 s: gone from 1 s (4 s kept), kept by 5 s (slices > now - 20), 100 s and 300 s.
      expect((await counters.increment('late', -4, T0_SEC - 10)).body).toEqual({
        name: 'late',
        count: -4,
        at: T0_SEC - 10,
        precisions: [5, 100, 300],
      });
      expect(await hash('late', 1)).toEqual({});
      expect(await hash('late', 5)).toEqual({ [T0_SEC - 10]: '-4' });
      expect(await hash('late', 100)).toEqual({ [T0_SEC - 100]: '-4' });
      expect(await known('late')).toEqual(['100:late', '300:late', '5:late']);
    });

    it('refuses (400) a sample older than every retention or more than 5 s ahead, writing nothing', async () => {
      await expect(counters.increment('x', 1, T0_SEC - 1200)).rejects.toThrow(
        /older than the longest retention \(4 samples x 300 s\)/,
      );
      await expect(counters.increment('x', 1, T0_SEC + 6)).rejects.toThrow(InvalidInputError);
      await expect(counters.increment('x', 0)).rejects.toThrow(/count must be a non-zero integer/);
      expect((await counters.increment('x', 1, T0_SEC + 5)).body).toMatchObject({ precisions: [1, 5, 100, 300] });
      await expect(counters.increment('y', 1, T0_SEC - 1101)).rejects.toThrow(
        /the oldest accepted is 1699998900 \(at 1699998899, now 1700000000\)/,
      );
      expect((await counters.increment('y', 1, T0_SEC - 1100)).body).toMatchObject({ precisions: [300] });
      expect(await hash('y', 300)).toEqual({ [T0_SEC - 1100]: '1' });
      expect(await known('y')).toContain('300:y');
      const indexes = new Set([keys.knownOf('x'), keys.knownOf('y')]).size;
      // per bucket a known index and a names zset; x: 4 hashes; y: one hash
      expect((await redis.dataKeys('*')).length).toBe(2 * indexes + 4 + 1);
    });

    it('the script itself applies the retention rule: nothing lands when every retention is past', async () => {
      expect((await store.increment('z', T0, T0_SEC - 5000, 1, UNLIMITED)).value).toEqual([]);
      expect((await redis.dataKeys('*')).length).toBe(0);
    });
  });

  describe('read', () => {
    it('answers live slices oldest first, 404 for an unknown counter, 400 for an unknown precision', async () => {
      for (let i = 0; i < 8; i++) {
        await counters.increment('r', i + 1);
        clock.advanceSec(1);
      }
      clock.advanceSec(-1); // now = T0 + 7
      expect(await counters.read('r', '1')).toEqual({
        name: 'r',
        precision: 1,
        samples: [4, 5, 6, 7].map((s) => ({ t: T0_SEC + s, count: s + 1 })),
      });
      // Raw data still holds the expired slices (the cleaner has not run): the read script hides them.
      expect(Object.keys(await hash('r', 1))).toHaveLength(8);
      const raw = await store.read('r', 1, clock.nowMs(), 0, Number.MAX_SAFE_INTEGER);
      expect(raw.known).toBe(true);
      expect(raw.samples.map((s) => s.t).sort()).toEqual([4, 5, 6, 7].map((s) => T0_SEC + s));
      expect((await store.read('r', 1, clock.nowMs(), T0_SEC + 5, T0_SEC + 6)).samples.map((s) => s.t).sort()).toEqual([
        T0_SEC + 5,
        T0_SEC + 6,
      ]);
      expect(await store.read('nope', 1, clock.nowMs(), 0, Number.MAX_SAFE_INTEGER)).toEqual({
        known: false,
        samples: [],
      });
      expect(await counters.read('r', '5s')).toEqual({
        name: 'r',
        precision: 5,
        samples: [
          { t: T0_SEC, count: 15 },
          { t: T0_SEC + 5, count: 21 },
        ],
      });
      await expect(counters.read('nope', '1')).rejects.toThrow(NotFoundError);
      await expect(counters.read('r', '60')).rejects.toThrow(
        'precision "60" is not configured: precision must be one of 1, 5, 100, 300',
      );
      await expect(counters.read('r', undefined)).rejects.toThrow(
        /precision is required: precision must be one of 1, 5, 100, 300/,
      );
    });

    it('cuts by from/to (overlap), fills empty slices, and knows a counter that only has data at other precisions', async () => {
      await counters.increment('f', 2, T0_SEC - 150); // only 100 s and 300 s keep it
      const read = (p: string, options = {}) => counters.read('f', p, options);
      expect((await read('1')).samples).toEqual([]);
      expect((await read('100')).samples).toEqual([{ t: T0_SEC - 200, count: 2 }]);
      expect((await read('100', { from: T0_SEC - 101 })).samples).toEqual([{ t: T0_SEC - 200, count: 2 }]);
      expect((await read('100', { from: T0_SEC - 100 })).samples).toEqual([]);
      expect((await read('100', { to: T0_SEC - 201 })).samples).toEqual([]);
      expect((await read('100', { fill: true })).samples).toEqual([
        { t: T0_SEC - 300, count: 0 },
        { t: T0_SEC - 200, count: 2 },
        { t: T0_SEC - 100, count: 0 },
        { t: T0_SEC, count: 0 },
      ]);
      expect((await read('100', { fill: true, from: T0_SEC - 200, to: T0_SEC - 150 })).samples).toEqual([
        { t: T0_SEC - 200, count: 2 },
      ]);
      await expect(read('100', { from: 10, to: 5 })).rejects.toThrow(/from \(10\) must not be after to \(5\)/);
    });
  });

  describe('list', () => {
    it('lists every counter of every bucket by name with its precisions, paged', async () => {
      const names = ['b', 'a', 'c:1', 'c.0', 'late'];
      for (const name of names) await counters.increment(name);
      await counters.increment('old', 1, T0_SEC - 500); // only 300 s keeps it
      const buckets = new Set([...names, 'old'].map((n) => keys.bucketOf(n)));
      expect(buckets.size).toBeGreaterThan(1);
      const all = await counters.list({ offset: 0, limit: 100 });
      expect([all.total, all.nextCursor]).toEqual([6, null]);
      expect(all.counters.map((c) => c.name)).toEqual(['a', 'b', 'c.0', 'c:1', 'late', 'old']);
      expect(all.counters[0].precisions).toEqual([1, 5, 100, 300]);
      expect(all.counters[5].precisions).toEqual([300]);
      const page = await counters.list({ offset: 2, limit: 2 });
      expect([page.counters.map((c) => c.name), page.nextCursor]).toEqual([['c.0', 'c:1'], 'c:1']);
      expect((await counters.list({ offset: 10, limit: 2 })).counters).toEqual([]);
      // A cursor page: the names after the cursor, whatever bucket and precision they are in.
      const after = await counters.list({ offset: 0, limit: 3, cursor: 'b' });
      expect([after.counters.map((c) => c.name), after.nextCursor]).toEqual([['c.0', 'c:1', 'late'], 'late']);
      expect((await counters.list({ offset: 0, limit: 3, cursor: 'late' })).counters).toEqual([
        { name: 'old', precisions: [300] },
      ]);
    });
  });

  describe('delete', () => {
    it('removes every hash and index entry of the counter, also of precisions no longer configured, and nothing else', async () => {
      await counters.increment('gone');
      await counters.increment('kept');
      // an entry left by an older config (precision 7 s), in the same bucket by construction
      const tag = keys.tag(keys.bucketOf('gone'));
      await redis.client.hset(`${tag}:count:7:gone`, T0_SEC, 1);
      await redis.client.zadd(`${tag}:known`, 0, '7:gone');
      await redis.client.zadd(`${tag}:known`, 0, '7:xgone'); // a different counter whose name ends like it
      await counters.delete('gone');
      expect(await redis.keys('*:gone')).toEqual([]);
      expect(await redis.client.zrange(`${tag}:known`, 0, -1)).not.toContain('1:gone');
      expect(await redis.client.zrange(`${tag}:known`, 0, -1)).toContain('7:xgone');
      expect(await known('kept')).toEqual(['100:kept', '1:kept', '300:kept', '5:kept']);
      await expect(counters.delete('gone')).rejects.toThrow(NotFoundError);
      await expect(counters.read('gone', '1')).rejects.toThrow(NotFoundError);
    });
  });

  describe('clean', () => {
    it('trims slices out of the retention, drops empty entries, keeps the rest, and pages through a bucket', async () => {
      const bucket = keys.bucketOf('c');
      await counters.increment('c', 1, T0_SEC - 19); // 1 s: no; 5 s: slice T0-20 is not > T0-20, no; 100 s, 300 s: yes
      await counters.increment('c', 1);
      clock.advanceSec(30);
      // now = T0 + 30: 1 s cutoff T0+26 (slice T0 out), 5 s cutoff T0+10 (T0 out); 100 s and 300 s keep all
      let page = await store.cleanPage(bucket, clock.nowMs(), 0, '');
      // lexicographic order: "100:c" < "1:c" < "300:c" < "5:c"; a page holds 2 entries
      expect(page).toEqual({ next: '1:c', visited: 2, due: 2, slicesRemoved: 1, entriesRemoved: 1, namesRemoved: 0 });
      expect(await hash('c', 1)).toEqual({});
      expect(await known('c')).toEqual(['100:c', '300:c', '5:c']);
      page = await store.cleanPage(bucket, clock.nowMs(), 0, page.next);
      expect(page).toEqual({ next: '5:c', visited: 2, due: 2, slicesRemoved: 1, entriesRemoved: 1, namesRemoved: 0 });
      page = await store.cleanPage(bucket, clock.nowMs(), 0, page.next);
      expect(page).toEqual({ next: '', visited: 0, due: 0, slicesRemoved: 0, entriesRemoved: 0, namesRemoved: 0 });
      expect(await known('c')).toEqual(['100:c', '300:c']);
      expect(await hash('c', 1)).toEqual({});
      expect(await hash('c', 5)).toEqual({});
      expect(await hash('c', 100)).toEqual({ [T0_SEC - 100]: '1', [T0_SEC]: '1' });
    });

    it('ends a page before a due entry whose slices would take it past the fields a page reads (2 000)', async () => {
      // Two counters whose 1 s hashes hold 1 500 slices each no cleaner took (it did not run for a while):
      // a page of both read 3 000 fields; now each is a page of its own.
      const stale = (name: string) =>
        redis.client.hset(
          keys.count(name, 1),
          Object.fromEntries(Array.from({ length: 1500 }, (_, n) => [String(T0_SEC - 100 - n), '1'])),
        );
      const bucket = keys.bucketOf('s1');
      const other = ['s2', 's3', 's4', 's5', 's6', 's7', 's8'].find((name) => keys.bucketOf(name) === bucket)!;
      for (const name of ['s1', other]) {
        await counters.increment(name, 1);
        await stale(name);
      }
      // From the first 1 s entry ("100:…" sorts before "1:…"): a page of 2 holds both counters' 1 s entries.
      const first = await store.cleanPage(bucket, clock.nowMs(), 0, '100:~');
      expect(first).toEqual({
        next: '1:s1',
        visited: 1,
        due: 1,
        slicesRemoved: 1500,
        entriesRemoved: 0,
        namesRemoved: 0,
      });
      expect(await store.cleanPage(bucket, clock.nowMs(), 0, first.next)).toMatchObject({ slicesRemoved: 1500 });
      expect(await hash(other, 1)).toEqual({ [T0_SEC]: '1' });
    });

    it('visits a precision only on its passes (p = 300: every 5th), and a pass over all buckets leaves the index clean', async () => {
      for (const name of ['p', 'q', 'r', 's', 't']) await counters.increment(name);
      clock.advanceSec(2000); // everything is out of every retention
      const first = await counters.cleanPass(1); // 1, 5 and 100 s are due (100/60 = 1); 300 s is not
      expect(first).toMatchObject({
        pass: 1,
        visited: 20,
        due: 15,
        slicesRemoved: 15,
        entriesRemoved: 15,
        failures: 0,
      });
      expect((await counters.list({ offset: 0, limit: 100 })).counters.map((c) => c.precisions)).toEqual(
        Array(5).fill([300]),
      );
      expect(await counters.cleanPass(5)).toMatchObject({ visited: 5, due: 5, entriesRemoved: 5 });
      expect((await redis.dataKeys('*')).length).toBe(0);
      // Running it again is harmless.
      expect(await counters.cleanPass(5)).toMatchObject({ visited: 0, due: 0, entriesRemoved: 0, failures: 0 });
    });

    it('a failing bucket is counted and the other buckets are still cleaned', async () => {
      await counters.increment('ok');
      const broken = (keys.bucketOf('ok') + 1) % 4;
      await redis.client.set(keys.known(broken), 'not a zset');
      clock.advanceSec(2000);
      const result = await counters.cleanPass(0);
      expect(result).toMatchObject({ failures: 1, entriesRemoved: 4 });
      expect(await known('ok')).toEqual([]);
    });

    it('never drops an entry whose hash still has data, and an empty entry left in the index is removed', async () => {
      await counters.increment('e');
      await redis.client.del(keys.count('e', 300)); // simulate an entry whose hash is gone
      expect(await counters.cleanPass(0)).toMatchObject({ entriesRemoved: 1 });
      expect(await known('e')).toEqual(['100:e', '1:e', '5:e']);
    });
  });
});
