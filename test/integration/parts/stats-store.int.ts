import { HttpAdapterHost } from '@nestjs/core';
import calculateSlot from 'cluster-key-slot';
import { FakeClock } from '../../../harness/clock';
import { AnsweredRequests } from '../../../src/common/answered-requests';
import { AppConfig, validateConfig } from '../../../src/common/config';
import { JobRegistry } from '../../../src/common/jobs';
import { NotFoundError } from '../../../src/common/errors';
import { RedisService } from '../../../src/redis/redis.service';
import { RedisSettings } from '../../../src/redis/redis.settings';
import { RedisFunctions } from '../../../src/redis/redis-functions';
import { AccessTimeRecorder } from '../../../src/stats/access-time.recorder';
import { ACCESS_TIME, StatsService } from '../../../src/stats/stats.service';
import { Batch, StatsStore } from '../../../src/stats/stats.store';
import {
  addToHistogram,
  addValue,
  bucketField,
  emptyMoments,
  MAX_INDEX,
  RELATIVE_ACCURACY,
} from '../../../src/stats/stats-math';
import { startTestRedis, TestRedis, TOPOLOGIES } from '../../../harness/redis';
import { StatsSettings } from '../../../src/stats/stats.settings';

const T0 = 1_700_002_800_000; // an hour boundary (unix ms)
const H0 = T0 / 1000;
const HOUR_MS = 3_600_000;

function batchOf(context: string, hourStart: number, values: number[], type = ACCESS_TIME): Batch {
  const batch: Batch = { context, type, hourStart, moments: emptyMoments(), histogram: new Map() };
  for (const v of values) {
    addValue(batch.moments, v);
    addToHistogram(batch.histogram, v);
  }
  return batch;
}

/** The real store, whose first slowest-list update fails (after the batches were merged). */
class SlowestFailsOnce extends StatsStore {
  private failed = false;

  override async updateSlowest(...args: Parameters<StatsStore['updateSlowest']>): Promise<void> {
    if (!this.failed) {
      this.failed = true;
      throw new Error('slowest list unavailable');
    }
    return super.updateSlowest(...args);
  }
}

describe.each(TOPOLOGIES)('stats functions through the store (real Redis, %s)', (topology) => {
  let redis: TestRedis;
  let service: RedisService;
  let config: AppConfig;
  let store: StatsStore;
  let stats: StatsService;
  const clock = new FakeClock(T0);
  const cur = (context: string, type = 'T') => store.keys.current(context, type);
  const prev = (context: string, type = 'T') => store.keys.previous(context, type);
  const hash = async (key: string) => redis.client.hgetall(key);

  beforeAll(async () => {
    redis = await startTestRedis(topology);
    config = validateConfig({ ...redis.env, REDIS_COMMAND_TIMEOUT_MS: '5000' });
    service = new RedisService(RedisSettings.from(config), clock);
    await service.waitUntilReady(5000);
    store = new StatsStore(service, new RedisFunctions(service), StatsSettings.from(config));
    stats = new StatsService(store, clock);
  });
  afterAll(async () => {
    await service.onApplicationShutdown();
    await redis.stop();
  });
  beforeEach(async () => {
    await redis.clear();
    clock.setMs(T0);
    stats = new StatsService(store, clock); // a fresh in-process index cache
  });

  describe('record', () => {
    it('answers the hour figures and writes count, sum, sumsq, min, max, mean, M2 and histogram fields', async () => {
      clock.advanceSec(10);
      expect((await stats.record('page', 'T', 2)).body).toEqual({
        context: 'page',
        type: 'T',
        hourStart: H0,
        recorded: true,
        count: 1,
        sum: 2,
        sumsq: 4,
      });
      await stats.record('page', 'T', -3);
      const third = (await stats.record('page', 'T', 0)).body;
      expect(third).toMatchObject({ count: 3, sum: -1, sumsq: 13 });
      const raw = await hash(cur('page'));
      expect(raw).toMatchObject({
        hour: String(H0),
        count: '3',
        sum: '-1',
        sumsq: '13',
        min: '-3',
        max: '2',
        z: '1',
        [bucketField(2)]: '1',
        [bucketField(-3)]: '1',
      });
      expect(Number(raw.mean)).toBeCloseTo(-1 / 3, 12);
      expect(Number(raw.m2)).toBeCloseTo(38 / 3, 10); // sample variance 19/3
      const ttl = await redis.client.ttl(cur('page'));
      expect(ttl).toBeGreaterThan(2 * 3600 - 10 - 1);
      expect(ttl).toBeLessThanOrEqual(2 * 3600 + 60 - 10);
      expect(await redis.client.exists(prev('page'))).toBe(0);
      expect(await redis.client.zrange(store.keys.index(), 0, -1, 'WITHSCORES')).toEqual(['page\tT', String(H0)]);
    });

    it('keeps full double precision', async () => {
      await stats.record('p', 'T', 0.1);
      expect((await stats.record('p', 'T', 0.2)).body.sum).toBe(0.1 + 0.2);
      const view = await stats.read('p', 'T');
      expect(view).toMatchObject({ min: 0.1, max: 0.2, sum: 0.1 + 0.2, sumsq: 0.1 * 0.1 + 0.2 * 0.2 });
    });

    it('names keys so a context with braces, slashes, spaces and colons stays inside its hash tag', async () => {
      const context = 'GET /boards/{board}/items/:item';
      await stats.record(context, 'A:B', 1);
      expect(cur(context, 'A:B')).toBe(`{${redis.prefix}stats:GET /boards/%7Bboard%7D/items/%3Aitem:A:B}:cur`);
      expect(calculateSlot(cur(context, 'A:B'))).toBe(calculateSlot(prev(context, 'A:B')));
      expect(await redis.client.hget(cur(context, 'A:B'), 'count')).toBe('1');
      // A context that would collide without escaping ("x:y" + "z" vs "x" + "y:z") gets its own keys.
      await stats.record('x:y', 'z', 1);
      await stats.record('x', 'y:z', 5);
      expect((await stats.read('x:y', 'z')).sum).toBe(1);
      expect((await stats.read('x', 'y:z')).sum).toBe(5);
      expect((await stats.list(0, 10)).items.map((i) => [i.context, i.type])).toEqual([
        ['GET /boards/{board}/items/:item', 'A:B'],
        ['x', 'y:z'],
        ['x:y', 'z'],
      ]);
    });

    it('reads average, stable stddev and quantiles within 1 %', async () => {
      const values = Array.from({ length: 400 }, (_, i) => 0.001 * (1 + ((i * 7919) % 400)) ** 1.5);
      for (let i = 0; i < values.length; i += 100) await stats.flush([batchOf('q', H0, values.slice(i, i + 100), 'T')]);
      const view = await stats.read('q', 'T');
      const sorted = [...values].sort((a, b) => a - b);
      const mean = values.reduce((s, v) => s + v, 0) / values.length;
      expect(view.count).toBe(400);
      expect(view.average).toBeCloseTo(mean, 9);
      const sd = Math.sqrt(values.reduce((s, v) => s + (v - mean) ** 2, 0) / 399);
      expect(view.stddev!).toBeCloseTo(sd, 9);
      for (const [q, got] of [
        [0.5, view.p50],
        [0.9, view.p90],
        [0.99, view.p99],
      ] as const) {
        const exact = sorted[Math.floor(q * 399)];
        expect(Math.abs(got! - exact)).toBeLessThanOrEqual(RELATIVE_ACCURACY * exact * (1 + 1e-9));
      }
    });

    it('gives a standard deviation of 0 for large equal values, null for one value', async () => {
      for (let i = 0; i < 50; i++) await stats.record('big', 'T', 1e9 + 0.1);
      expect((await stats.read('big', 'T')).stddev).toBe(0);
      await stats.record('one', 'T', 7);
      expect(await stats.read('one', 'T')).toMatchObject({
        count: 1,
        average: 7,
        stddev: null,
        p50: 7,
        p90: 7,
        p99: 7,
      });
    });

    it('clamps huge values into the top bucket and answers the max for it', async () => {
      await stats.record('huge', 'T', 1e90);
      await stats.record('huge', 'T', 1e80);
      await stats.record('huge', 'T', 1);
      expect(await redis.client.hget(cur('huge'), `p${MAX_INDEX}`)).toBe('2');
      expect(await stats.read('huge', 'T')).toMatchObject({ p50: 1e90, p90: 1e90, max: 1e90, min: 1 });
    });
  });

  describe('hour rollover', () => {
    it('moves current to previous when the next hour starts, and drops hours older than that', async () => {
      await stats.record('r', 'T', 1);
      await stats.record('r', 'T', 3);
      clock.advanceMs(HOUR_MS);
      // No write yet in the new hour: the stored hash reads as the previous hour.
      await expect(stats.read('r', 'T', 'current')).rejects.toThrow(NotFoundError);
      expect(await stats.read('r', 'T', 'previous')).toMatchObject({ hourStart: H0, count: 2, sum: 4, min: 1, max: 3 });
      expect((await stats.record('r', 'T', 10)).body).toMatchObject({ hourStart: H0 + 3600, count: 1, sum: 10 });
      expect(await hash(prev('r'))).toMatchObject({ hour: String(H0), count: '2', sum: '4' });
      expect(await hash(cur('r'))).toMatchObject({ hour: String(H0 + 3600), count: '1', sum: '10' });
      expect(await stats.read('r', 'T', 'current')).toMatchObject({ hourStart: H0 + 3600, count: 1 });
      expect(await stats.read('r', 'T', 'previous')).toMatchObject({ hourStart: H0, count: 2 });
      // Two hours later: the kept hours are both gone; nothing recorded in the previous hour.
      clock.advanceMs(2 * HOUR_MS);
      await stats.record('r', 'T', 5);
      expect(await redis.client.exists(prev('r'))).toBe(0);
      expect(await hash(cur('r'))).toMatchObject({ hour: String(H0 + 3 * 3600), count: '1' });
      await expect(stats.read('r', 'T', 'previous')).rejects.toThrow(
        /nothing recorded for context "r", type "T" in the previous hour/,
      );
    });

    it('a recorder whose clock is behind writes into the previous hour, never rolls back; older values are dropped', async () => {
      const late = new FakeClock(T0 + HOUR_MS - 1);
      const lateStats = new StatsService(store, late);
      clock.advanceMs(HOUR_MS);
      await stats.record('s', 'T', 100); // the new hour starts
      expect((await lateStats.record('s', 'T', 1)).body).toMatchObject({
        hourStart: H0,
        recorded: true,
        count: 1,
        sum: 1,
      });
      expect(await hash(cur('s'))).toMatchObject({ hour: String(H0 + 3600), count: '1', sum: '100' });
      expect(await hash(prev('s'))).toMatchObject({ hour: String(H0), count: '1', sum: '1' });
      const later = new StatsService(store, new FakeClock(T0 - 1));
      expect((await later.record('s', 'T', 9)).body).toMatchObject({ recorded: false, count: 0 });
      expect(await hash(prev('s'))).toMatchObject({ count: '1' });
    });

    it('two recorders racing across the boundary lose no sample and count each in its own hour', async () => {
      const before = new StatsService(store, new FakeClock(T0 + HOUR_MS - 5));
      const after = new StatsService(store, new FakeClock(T0 + HOUR_MS + 5));
      clock.setMs(T0 + HOUR_MS + 5);
      await before.record('race', 'T', 0.5); // the old hour already holds something
      const writes: Array<Promise<unknown>> = [];
      for (let i = 1; i <= 60; i++) {
        writes.push(before.record('race', 'T', i));
        writes.push(after.record('race', 'T', 1000 + i));
      }
      await Promise.all(writes);
      const old = await stats.read('race', 'T', 'previous');
      const now = await stats.read('race', 'T', 'current');
      expect(old).toMatchObject({ hourStart: H0, count: 61, sum: 0.5 + (60 * 61) / 2, min: 0.5, max: 60 });
      expect(now).toMatchObject({
        hourStart: H0 + 3600,
        count: 60,
        sum: 60 * 1000 + (60 * 61) / 2,
        min: 1001,
        max: 1060,
      });
    });
  });

  describe('flush (merge batches)', () => {
    it('merges a batch like recording each value, rolls over the same way, and updates the slowest list', async () => {
      await stats.flush([batchOf('GET /a', H0, [0.1, 0.2, 0.3]), batchOf('GET /b', H0, [1])]);
      await stats.flush([batchOf('GET /a', H0, [0.4])]);
      // AccessTime is the service's own type: a client records the same values under another.
      for (const v of [0.1, 0.2, 0.3, 0.4]) await stats.record('direct', 'Direct', v);
      const merged = await stats.read('GET /a', ACCESS_TIME);
      const direct = await stats.read('direct', 'Direct');
      expect({ ...merged, context: 'x', type: 'x' }).toEqual({
        ...direct,
        context: 'x',
        type: 'x',
        sum: merged.sum,
        sumsq: merged.sumsq,
        average: merged.average,
        stddev: merged.stddev,
      });
      expect(merged.sum).toBeCloseTo(1, 12);
      expect(merged.stddev!).toBeCloseTo(direct.stddev!, 12);
      expect(await stats.slowest(10)).toEqual([
        { context: 'GET /b', average: 1 },
        { context: 'GET /a', average: merged.average },
      ]);
      expect(await redis.client.zrange(store.keys.index(), 0, -1)).toEqual([
        'GET /a\tAccessTime',
        'GET /b\tAccessTime',
        'direct\tDirect',
      ]);
      // A batch of the previous hour flushed after another instance rolled over lands in the previous hour.
      clock.advanceMs(HOUR_MS);
      await stats.flush([batchOf('GET /a', H0 + 3600, [2])]);
      await stats.flush([batchOf('GET /a', H0, [0.5])]);
      expect(await stats.read('GET /a', ACCESS_TIME, 'previous')).toMatchObject({ count: 5, max: 0.5 });
      expect(await stats.read('GET /a', ACCESS_TIME, 'current')).toMatchObject({ count: 1, sum: 2 });
      expect((await stats.slowest(1))[0]).toEqual({ context: 'GET /a', average: 2 });
    });

    it('reloads its functions after the server lost them, in the pipelined flush and in single calls', async () => {
      const flushScripts = redis.flushScripts;
      if (!flushScripts) return; // a shared server's scripts are the other files' too
      await stats.flush([batchOf('GET /a', H0, [0.1])]);
      await flushScripts();
      await stats.flush([batchOf('GET /a', H0, [0.3]), batchOf('GET /b', H0, [1])]);
      await flushScripts();
      await stats.record('ctx', 'T', 2);
      await flushScripts();
      expect(await stats.read('GET /a', ACCESS_TIME)).toMatchObject({ count: 2, max: 0.3 });
      expect(await stats.read('ctx', 'T')).toMatchObject({ count: 1 });
    });

    it('counts each sample once when the slowest-list update fails after the merges, and retries the list alone', async () => {
      const flaky = new StatsService(
        new SlowestFailsOnce(service, new RedisFunctions(service), StatsSettings.from(config)),
        clock,
      );
      const answered = new AnsweredRequests(new HttpAdapterHost());
      const recorder = new AccessTimeRecorder(
        answered,
        flaky,
        clock,
        StatsSettings.from(config),
        service,
        new JobRegistry(),
      );
      recorder.observe('GET /a', 0.1);
      recorder.observe('GET /a', 0.3);
      recorder.observe('GET /b', 2);
      await recorder.flush();
      expect(recorder.stats).toMatchObject({ runs: 1, failures: 1 });
      expect(await stats.read('GET /a', ACCESS_TIME)).toMatchObject({ count: 2, max: 0.3 });
      expect(await stats.slowest(10)).toEqual([]);

      recorder.observe('GET /a', 0.5);
      await recorder.flush();
      expect(recorder.stats).toMatchObject({ runs: 2, failures: 1 });
      const a = await stats.read('GET /a', ACCESS_TIME);
      expect(a).toMatchObject({ count: 3, min: 0.1, max: 0.5 });
      expect(a.sum).toBeCloseTo(0.9, 12);
      expect(await stats.read('GET /b', ACCESS_TIME)).toMatchObject({ count: 1, sum: 2 });
      // GET /b had no new sample: its entry comes from the retried update.
      expect(await stats.slowest(10)).toEqual([
        { context: 'GET /b', average: 2 },
        { context: 'GET /a', average: a.average },
      ]);
    });

    it('lists only the current hour in the slowest list: the routes of a past hour are gone, and its key expires', async () => {
      await stats.flush([batchOf('GET /old', H0, [50])]);
      expect(await stats.slowest(10)).toEqual([{ context: 'GET /old', average: 50 }]);
      const ttlSec = await redis.client.ttl(store.keys.slowest(ACCESS_TIME, H0));
      expect(ttlSec).toBeGreaterThan(0);
      expect(ttlSec).toBeLessThanOrEqual(2 * 3600);
      clock.advanceMs(HOUR_MS);
      expect(await stats.slowest(10)).toEqual([]);
      await stats.flush([batchOf('GET /new', H0 + 3600, [0.2])]);
      expect(await stats.slowest(10)).toEqual([{ context: 'GET /new', average: 0.2 }]);
    });

    it('keeps only the 100 slowest contexts', async () => {
      await stats.flush(Array.from({ length: 105 }, (_, i) => batchOf(`GET /r${i}`, H0, [i + 1])));
      expect(await redis.client.zcard(store.keys.slowest(ACCESS_TIME, H0))).toBe(100);
      const top = await stats.slowest(100);
      expect(top[0]).toEqual({ context: 'GET /r104', average: 105 });
      expect(top[99]).toEqual({ context: 'GET /r5', average: 6 });
    });

    it('lists recorded pairs and forgets those older than the previous hour', async () => {
      await stats.record('old', 'T', 1);
      clock.advanceMs(HOUR_MS);
      await stats.record('mid', 'T', 1);
      clock.advanceMs(HOUR_MS);
      await stats.record('new', 'T', 1);
      await stats.record('new', 'U', 1);
      expect(await stats.list(0, 10)).toEqual({
        total: 3,
        items: [
          { context: 'mid', type: 'T', hourStart: H0 + 3600 },
          { context: 'new', type: 'T', hourStart: H0 + 7200 },
          { context: 'new', type: 'U', hourStart: H0 + 7200 },
        ],
      });
      expect((await stats.list(1, 1)).items).toEqual([{ context: 'new', type: 'T', hourStart: H0 + 7200 }]);
    });
  });
});
