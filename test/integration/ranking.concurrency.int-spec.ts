import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { FakeClock } from '../../harness/clock';
import { RankingScheduler } from '../../src/ranking/expiry/ranking.scheduler';
import { RankingService } from '../../src/ranking/ranking.service';
import { startTestApp } from '../../harness/app';
import { RankingModel } from '../support/ranking-model';
import { startTestRedis, TestRedis, TOPOLOGIES } from '../../harness/redis';

const WINDOWS = [
  { name: 's', periodSec: 6, intervalSec: 2 },
  { name: 'l', periodSec: 30, intervalSec: 10 },
];
const ITEMS = Array.from({ length: 25 }, (_, i) => `item-${i}`);

/** Deterministic pseudo-random numbers, so a failure can be replayed. */
function lcg(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

describe.each(TOPOLOGIES)('two app instances with running schedulers against one Redis (%s)', (topology) => {
  // One Redis for both shard counts: each count's apps and keys are gone before the next one starts.
  let redis: TestRedis;
  beforeAll(async () => {
    redis = await startTestRedis(topology);
  });
  afterAll(() => redis.stop());

  describe.each([1, 3])('%i shard(s)', (shards) => {
    let apps: NestFastifyApplication[];
    const clock = new FakeClock(1_700_000_000_000);
    const BOARD = `hot${shards}`;

    beforeAll(async () => {
      // Small chunks and a fast scheduler: expiry runs often, in parts, from both instances at once.
      const env = { SCHEDULER_ENABLED: 'true', SCHEDULER_INTERVAL_MS: '100', EXPIRE_CHUNK: '7' };
      apps = await Promise.all([startTestApp(redis, clock, env), startTestApp(redis, clock, env)]);
    });
    afterAll(async () => {
      await Promise.all(apps.map((app) => app.close()));
      await redis.clear();
    });

    it('keeps every sum exact while thousands of increments race expiry across slot boundaries', async () => {
      const [a, b] = apps.map((app) => app.get(RankingService));
      const schedulers = apps.map((app) => app.get(RankingScheduler));
      await a.putBoard({
        name: BOARD,
        windows: WINDOWS.map((w) => ({ name: w.name, period: w.periodSec, interval: w.intervalSec })),
        shards,
      });
      await b.getBoard(BOARD); // both instances hold the config, so each request reads the clock when it is made
      const model = new RankingModel(WINDOWS);
      const random = lcg(42);
      let sent = 0;

      for (let phase = 0; phase < 30; phase++) {
        const pending: Array<Promise<unknown>> = [];
        for (let i = 0; i < 120; i++) {
          const service = i % 2 === 0 ? a : b;
          const nowMs = clock.nowMs();
          if (i % 10 === 9) {
            const entries = [0, 1, 2].map(() => ({
              item: ITEMS[Math.floor(random() * ITEMS.length)],
              amount: 1 + Math.floor(random() * 3),
            }));
            pending.push(service.incrementBatch(BOARD, entries));
            for (const e of entries) model.increment(nowMs, e.item, e.amount);
          } else {
            const item = ITEMS[Math.floor(random() * ITEMS.length)];
            const amount = random() < 0.1 ? -1 : 1 + Math.floor(random() * 3);
            pending.push(service.increment(BOARD, item, amount));
            model.increment(nowMs, item, amount);
          }
          sent++;
          // Move time while requests are in flight, often across slot boundaries.
          if (i % 40 === 39) {
            clock.advanceMs(Math.floor(random() * 2500));
            pending.push(...schedulers.map((s) => s.tick()));
          }
        }
        await Promise.all(pending);
        await Promise.all(schedulers.map((s) => s.tick()));
        await expectExact(a, model);
      }
      expect(sent).toBe(3600);
      expect(schedulers.every((s) => s.stats.failures === 0)).toBe(true);
      expect(schedulers.every((s) => s.stats.runs > 0)).toBe(true);
    });

    async function expectExact(service: RankingService, model: RankingModel): Promise<void> {
      const nowMs = clock.nowMs();
      for (const w of WINDOWS) {
        let top = await service.top(BOARD, w.name, 0, 1000);
        for (let i = 0; top.draining && i < 100; i++) top = await service.top(BOARD, w.name, 0, 1000);
        expect(top.items).toEqual(model.listed(w.name, nowMs));
        // Every listed item is in some shard's raw results (so the raw check below is not vacuous).
        expect(await expectInvariant(w.name)).toBeGreaterThanOrEqual(top.items.length);
      }
    }

    /** Raw keys of every shard: the results zset equals the sum of the live slot hashes, item by item; no orphan slot. Answers the items stored. */
    async function expectInvariant(windowName: string): Promise<number> {
      let storedItems = 0;
      for (let shard = 0; shard < shards; shard++) {
        const board = `board:${BOARD}${shard === 0 ? '' : `/${shard}`}}`;
        const tag = `{${redis.prefix}${board}:${windowName}`;
        const starts = await redis.client.zrange(`${tag}:slots`, 0, -1);
        const sums = new Map<string, number>();
        for (const start of starts) {
          for (const [item, value] of Object.entries(await redis.client.hgetall(`${tag}:slot:${start}`)))
            sums.set(item, (sums.get(item) ?? 0) + Number(value));
        }
        const top = await redis.client.zrange(`${tag}:top`, 0, -1, 'WITHSCORES');
        const stored = new Map<string, number>();
        for (let i = 0; i < top.length; i += 2) stored.set(top[i], Number(top[i + 1]));
        storedItems += stored.size;
        // One expect for all items: an expectation costs more to build than a row to compare.
        const summed = [...sums].filter(([, sum]) => sum !== 0);
        expect(summed.map(([item]) => [item, stored.get(item)])).toEqual(summed);
        expect([...stored]).toEqual([...stored].map(([item]) => [item, sums.get(item)]));
        const slotKeys = await redis.keys(`${board}:${windowName}:slot:*`);
        expect(slotKeys.sort()).toEqual(starts.map((s) => `${tag}:slot:${s}`).sort());
      }
      return storedItems;
    }
  });
});
