import fc from 'fast-check';
import { FakeClock } from '../../harness/clock';
import { validateConfig } from '../../src/common/config';
import { NotFoundError } from '../../src/common/errors';
import { RedisService } from '../../src/redis/redis.service';
import { RankingService } from '../../src/ranking/ranking.service';
import { rankingServiceOn, startRankingService } from '../../harness/ranking';
import { startTestRedis, TestRedis, TOPOLOGIES } from '../../harness/redis';

const T0 = 1_700_002_800_000; // an hour boundary (unix ms)
const T0_SEC = T0 / 1000;
const MINUTE_MS = 60_000;
const PASS = { leaseMs: 30_000, claimBatch: 100 };

describe.each(TOPOLOGIES)('window history: snapshots and previous ranks (real Redis, %s)', (topology) => {
  // One Redis for both shard counts: every test starts from cleared keys, each count with its own services.
  let redis: TestRedis;
  beforeAll(async () => {
    redis = await startTestRedis(topology);
  });
  afterAll(() => redis.stop());

  describe.each([1, 3])('%i shard(s)', (shards) => {
    let service: RedisService;
    let ranking: RankingService;
    let second: RankingService;
    const clock = new FakeClock(T0);
    const snapshotIndexes = () => redis.dataKeys('board:b*:m:snaps');

    beforeAll(async () => {
      const started = await startRankingService(redis, clock, { EXPIRE_CHUNK: '3' });
      ({ ranking, redisService: service } = started);
      const config = validateConfig({ ...redis.env, REDIS_COMMAND_TIMEOUT_MS: '5000', EXPIRE_CHUNK: '3' });
      second = await rankingServiceOn(service, started.functions, config, clock);
    });
    afterAll(async () => {
      await service.onApplicationShutdown();
    });
    beforeEach(async () => {
      await redis.clear();
      clock.setMs(T0);
      await ranking.putBoard({
        name: 'b',
        windows: [
          { name: 'm', period: '3m', interval: '1m', snapshots: { keep: 3, top: 4 } },
          { name: 'plain', period: '1h', interval: '1m' },
        ],
        shards,
      });
    });

    /** Sends increments of `amount` per item, from both instances at once. */
    async function write(amounts: Record<string, number>): Promise<void> {
      await Promise.all(
        Object.entries(amounts).map(([item, amount], i) => (i % 2 ? second : ranking).increment('b', item, amount)),
      );
    }

    it('stores the listing as it stood when the slot closed, once, and answers previousRank from it', async () => {
      const version = await ranking.changeVersion('b');
      await write({ a: 5, b: 3, c: 9, d: 1, e: 2 });
      // Every write bumps its shard's change version: the board's is their sum (what the live stream polls).
      expect(await second.changeVersion('b')).toBe(version + 5);
      const closing = (await ranking.top('b', 'm', 0, 10)).items;
      expect(closing.map((row) => row.previousRank)).toEqual([null, null, null, null, null]);

      clock.advanceMs(MINUTE_MS);
      // Many writers from two instances race to cross the boundary: one snapshot, taken before any of them applied.
      await Promise.all(
        Array.from({ length: 40 }, (_, i) => (i % 2 ? second : ranking).increment('b', i % 3 ? 'e' : 'z', 2)),
      );
      const history = await ranking.history('b', 'm', undefined);
      expect(history).toMatchObject({ at: T0_SEC + 60, from: T0_SEC - 120, to: T0_SEC + 60 });
      expect(history.items).toEqual(closing.slice(0, 4).map(({ rank, item, score }) => ({ rank, item, score })));
      for (const index of await snapshotIndexes()) expect(await redis.client.zcard(index)).toBe(1);

      const top = await ranking.top('b', 'm', 0, 10);
      const previous = Object.fromEntries(top.items.map((row) => [row.item, row.previousRank]));
      expect(previous).toEqual({ c: 1, e: 4, a: 2, b: 3, z: null, d: null });
      const written = await ranking.increment('b', 'a', 1);
      expect(written.body.windows.m.previousRank).toBe(2);
      expect(written.body.windows.plain.previousRank).toBeNull();
      const around = await ranking.around('b', 'm', 'b', 1);
      expect(around.items.find((row) => row.item === 'b')?.previousRank).toBe(3);
    });

    it("answers an item's series, the snapshot at or before a time, and keeps only `keep` boundaries", async () => {
      const ranks: Array<number | null> = [];
      for (let slot = 0; slot < 6; slot++) {
        clock.setMs(T0 + slot * MINUTE_MS);
        await write({ [`x${slot}`]: 10 + slot, a: slot === 2 ? 100 : 1 });
        ranks.push((await ranking.item('b', 'm', 'a')).rank);
      }
      clock.setMs(T0 + 6 * MINUTE_MS);
      const series = await ranking.itemHistory('b', 'm', 'a', undefined, undefined);
      // keep 3: the boundaries at slots 4, 5 and 6 (each the close of the slot before).
      expect(series.points.map((point) => point.at)).toEqual([4, 5, 6].map((slot) => T0_SEC + slot * 60));
      expect(series.points.map((point) => point.rank)).toEqual([ranks[3], ranks[4], ranks[5]]);
      expect(series.points[0].score).toBe(102);
      const atFive = await ranking.history('b', 'm', T0_SEC + 5 * 60 + 30);
      expect(atFive.at).toBe(T0_SEC + 5 * 60);
      await expect(ranking.history('b', 'm', T0_SEC + 60)).rejects.toThrow(NotFoundError);
      for (const index of await snapshotIndexes()) expect(await redis.client.zcard(index)).toBeLessThanOrEqual(3);
      expect((await redis.dataKeys('board:b*:m:snap:*')).length).toBeLessThanOrEqual(3 * shards);
    });

    it('a scheduler pass crosses a boundary nobody else reaches, and a window without snapshots answers 404', async () => {
      await write({ a: 2, b: 1 });
      clock.advanceMs(MINUTE_MS);
      await ranking.expireDue(PASS);
      expect((await snapshotIndexes()).length).toBeGreaterThan(0);
      // Written by the pass: reading it crosses nothing more.
      const history = await ranking.history('b', 'm', undefined);
      expect(history.items.map((row) => row.item)).toEqual(['a', 'b']);
      await expect(ranking.history('b', 'plain', undefined)).rejects.toThrow(/keeps no snapshots/);
    });

    /** Each item's history: one point, its score and its competition rank among `amounts`. */
    async function expectRanks(amounts: number[]): Promise<void> {
      for (const [i, amount] of amounts.entries()) {
        const { points } = await ranking.itemHistory('wide', 'm', `i${i}`, undefined, undefined);
        expect(points.map(({ score, rank }) => ({ score, rank }))).toEqual([
          { score: amount, rank: 1 + amounts.filter((other) => other > amount).length },
        ]);
      }
    }

    it("an item's rank in each snapshot counts the rows scoring strictly above it, ties and all", async () => {
      const windows = [{ name: 'm', period: '3m', interval: '1m', snapshots: { keep: 3, top: 40 } }];
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.integer({ min: 1, max: 12 }), { minLength: 1, maxLength: 30 }),
          async (amounts) => {
            await redis.clear();
            clock.setMs(T0);
            await ranking.putBoard({ name: 'wide', windows, shards });
            await ranking.top('wide', 'm', 0, 1); // marks the slot, so the next minute's first call snapshots it
            await Promise.all(amounts.map((amount, i) => ranking.increment('wide', `i${i}`, amount)));
            clock.advanceMs(MINUTE_MS);
            await expectRanks(amounts);
            // Snapshots taken before rows stored their position are read by counting rows.
            for (const key of await redis.dataKeys('board:wide*:m:snap:*')) {
              const rows = (await redis.client.get(key)) ?? '';
              await redis.client.set(
                key,
                rows
                  .split('\x1e')
                  .map((row) => row.split('\x1f').slice(0, 2).join('\x1f'))
                  .join('\x1e'),
                'KEEPTTL',
              );
            }
            await expectRanks(amounts);
          },
        ),
        { numRuns: 6 },
      );
    });

    it('a board delete removes its history; changing snapshots restarts it', async () => {
      await write({ a: 2 });
      clock.advanceMs(MINUTE_MS);
      await ranking.top('b', 'm', 0, 1);
      expect((await redis.dataKeys('board:b*:m:snap*')).length).toBeGreaterThan(0);
      await ranking.putBoard({
        name: 'b',
        windows: [
          { name: 'm', period: '3m', interval: '1m', snapshots: { keep: 5, top: 4 } },
          { name: 'plain', period: '1h', interval: '1m' },
        ],
        shards,
      });
      expect(await redis.dataKeys('board:b*:m:snap*')).toEqual([]);
      expect((await ranking.getBoard('b')).windows[0].snapshots).toEqual({ keep: 5, top: 4 });
      await ranking.deleteBoard('b');
      expect(await redis.dataKeys('board:b*')).toEqual([]);
    });
  });
});
