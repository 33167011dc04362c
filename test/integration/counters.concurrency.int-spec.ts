import { FakeClock } from '../../harness/clock';
import { validateConfig } from '../../src/common/config';
import { NotFoundError } from '../../src/common/errors';
import { parseMember } from '../../src/counters/counter-keys';
import { CountersService } from '../../src/counters/counters.service';
import { CounterStore } from '../../src/counters/counters.store';
import { RedisService } from '../../src/redis/redis.service';
import { RedisSettings } from '../../src/redis/redis.settings';
import { RedisFunctions } from '../../src/redis/redis-functions';
import { knownMembers } from '../support/counter-index';
import { startTestRedis, TestRedis, TOPOLOGIES } from '../../harness/redis';
import { CountersSettings } from '../../src/counters/counters.settings';

const PRECISIONS = [1, 5, 60];
const SAMPLES = 3; // retentions 3 s, 15 s, 180 s: clock jumps empty whole counters while increments arrive
const NAMES = Array.from({ length: 12 }, (_, i) => `n${i}`);

/** Deterministic pseudo-random numbers, so a failure can be replayed. */
function lcg(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

describe.each(TOPOLOGIES)('counters: increments racing two cleaners (two instances, %s)', (topology) => {
  let redis: TestRedis;
  const services: RedisService[] = [];
  const instances: Array<{ store: CounterStore; counters: CountersService }> = [];
  const clock = new FakeClock(1_700_000_000_000);

  beforeAll(async () => {
    redis = await startTestRedis(topology);
    const config = validateConfig({
      ...redis.env,
      REDIS_COMMAND_TIMEOUT_MS: '5000',
      COUNTER_PRECISIONS: PRECISIONS.join(','),
      COUNTER_SAMPLES: String(SAMPLES),
      COUNTER_INDEX_BUCKETS: '2',
      COUNTER_CLEAN_BATCH: '2', // many small pages: many interleavings with the increments
    });
    for (let i = 0; i < 2; i++) {
      const service = new RedisService(RedisSettings.from(config), clock);
      await service.waitUntilReady(5000);
      const store = new CounterStore(service, new RedisFunctions(service), CountersSettings.from(config));
      services.push(service);
      instances.push({ store, counters: new CountersService(store, clock) });
    }
  });
  afterAll(async () => {
    await Promise.all(services.map((s) => s.onApplicationShutdown()));
    await redis.stop();
  });

  it('loses no count, never leaves data outside the index, and a full pass leaves no empty entry', async () => {
    const random = lcg(7);
    const slices = new Map<string, number>(); // "<p>:<name>:<start>" -> count: every count sent (all accepted: at = now)
    const [a, b] = instances;
    let pass = 0;
    for (let phase = 0; phase < 30; phase++) {
      const pending: Array<Promise<unknown>> = [];
      const nowSec = Math.floor(clock.nowMs() / 1000);
      for (let i = 0; i < 60; i++) {
        const name = NAMES[Math.floor(random() * NAMES.length)];
        const count = 1 + Math.floor(random() * 3);
        pending.push((i % 2 ? a : b).counters.increment(name, count));
        for (const p of PRECISIONS) {
          const key = `${p}:${name}:${nowSec - (nowSec % p)}`;
          slices.set(key, (slices.get(key) ?? 0) + count);
        }
        if (i % 20 === 10) pending.push(a.counters.cleanPass(pass), b.counters.cleanPass(pass));
      }
      const results = await Promise.all(pending);
      expect(results.filter((r) => typeof r === 'object' && r !== null && 'failures' in r && r.failures !== 0)).toEqual(
        [],
      );
      pass++;
      // Every count key that holds data is listed in its bucket's index.
      const members = new Set(await knownMembers(redis, a.store));
      for (const key of await redis.keys(`cnt:*}:count:*`)) {
        const listed = key.replace(/^\{[^}]*\}:count:/, '');
        expect(members.has(listed) ? listed : `${listed} is missing from the index`).toBe(listed);
      }
      // Move on: mostly within a retention, sometimes past every short one.
      clock.advanceMs(random() < 0.2 ? 16_000 + Math.floor(random() * 10_000) : Math.floor(random() * 2_500));
    }

    // No count lost: every live slice holds exactly what was sent.
    const nowSec = Math.floor(clock.nowMs() / 1000);
    for (const name of NAMES) {
      for (const p of PRECISIONS) {
        const expected = [...slices.entries()]
          .map(([key, count]) => ({ key: key.split(':'), count }))
          .filter(({ key }) => key[0] === String(p) && key[1] === name && Number(key[2]) > nowSec - SAMPLES * p)
          .map(({ key, count }) => ({ t: Number(key[2]), count }))
          .sort((x, y) => x.t - y.t);
        const read = await a.counters.read(name, String(p)).catch((error: unknown) => {
          if (error instanceof NotFoundError) return { samples: [] };
          throw error;
        });
        expect(read.samples).toEqual(expected);
      }
    }

    // A full pass (every precision here is due on every pass): no entry without data is left.
    await Promise.all([a.counters.cleanPass(pass), b.counters.cleanPass(pass)]);
    for (const value of await knownMembers(redis, a.store)) {
      const parsed = parseMember(value)!;
      expect(await redis.client.hlen(a.store.keys.count(parsed.name, parsed.precisionSec))).toBeGreaterThan(0);
    }
    // Past every retention, two racing passes empty everything.
    clock.advanceSec(SAMPLES * 60);
    await Promise.all([a.counters.cleanPass(pass + 1), b.counters.cleanPass(pass + 1)]);
    expect(await knownMembers(redis, a.store)).toEqual([]);
    expect(await redis.dataKeys('cnt:*')).toEqual([]);
  });
});
