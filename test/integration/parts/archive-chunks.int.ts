import { DomainError } from '../../../src/common/errors';
import type { RankingService } from '../../../src/ranking/ranking.service';
import type { RedisService } from '../../../src/redis/redis.service';
import { startRankingService, useRankingService } from '../../../harness/ranking';
import { TOPOLOGIES } from '../../../harness/redis';

/**
 * A calendar window's archive taken in chunks (archive_lib.lua): EXPIRE_CHUNK 10 fields or rows a
 * call, so a period of 240 items and an archive of 25 rows take many calls, made in turn by two
 * instances (reads, writes and scheduler passes racing over the same boundary). The archive must
 * still be the period's exact final standings, stored once, listed only once complete.
 */
const CHUNK = 10;
const ITEMS = 240;
const TOP = 25;
const DAY_MS = 86_400_000;
const DAY_ONE_MS = Date.parse('2031-03-03T00:00:00Z');

interface Row {
  item: string;
  score: number;
}

/** The archive a brute force lists: positive scores, best first (equal scores: id descending, as ZREVRANGE), competition ranks. */
function expectedArchive(scores: Map<string, number>): Array<Row & { rank: number }> {
  const rows = [...scores]
    .filter(([, score]) => score > 0)
    .map(([item, score]) => ({ item, score }))
    .sort((a, b) => b.score - a.score || (a.item < b.item ? 1 : -1))
    .slice(0, TOP);
  return rows.map((row) => ({ rank: 1 + rows.filter((other) => other.score > row.score).length, ...row }));
}

/** Runs a read or write that may be refused while the window drains (503 WINDOW_DRAINING). */
async function tolerant<T>(call: () => Promise<T>): Promise<T | 'draining'> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof DomainError && error.code === 'WINDOW_DRAINING') return 'draining';
    throw error;
  }
}

describe.each(TOPOLOGIES)('a calendar archive taken in chunks by two instances (%s)', (topology) => {
  const setup = useRankingService(topology, { EXPIRE_CHUNK: String(CHUNK) });
  const { clock } = setup;
  // Nested: its afterAll runs before the outer one stops the Redis.
  describe('two instances', () => {
    let other: RankingService;
    let otherRedis: RedisService;
    beforeAll(async () => {
      ({ ranking: other, redisService: otherRedis } = await startRankingService(setup.redis, clock, {
        EXPIRE_CHUNK: String(CHUNK),
      }));
    });
    afterAll(() => otherRedis.onApplicationShutdown());

    it.each([
      ['sum', 1],
      ['max', 3],
    ] as const)('a %s board of %i shard(s): exact, once, listed only when complete', async (aggregate, shards) => {
      const name = `chunks-${aggregate}`;
      clock.setMs(DAY_ONE_MS + 3_600_000);
      await setup.ranking.putBoard({
        name,
        windows: [{ name: 'day', calendar: 'day', archive: { keep: 2, top: TOP } }],
        shards,
        aggregate,
      });
      const scores = new Map<string, number>();
      for (let i = 0; i < ITEMS; i++) {
        // Ties (40 distinct scores), and zero and negative sums that an archive leaves out.
        const score = ((i * 37) % 40) - 4;
        scores.set(`i${String(i).padStart(3, '0')}`, score);
      }
      const entries = [...scores].map(([item, score]) =>
        aggregate === 'sum' ? { item, amount: score } : { item, score },
      );
      await setup.ranking.incrementBatch(
        name,
        entries.filter((entry) => aggregate !== 'sum' || entry.amount !== 0),
      );
      // On the max board a worse score of the same day changes nothing.
      if (aggregate === 'max') await other.score(name, 'i001', -100);

      clock.setMs(DAY_ONE_MS + DAY_MS + 60_000);
      // One read, drained MAX_READ_DRAIN_CALLS chunks: the archive is still pending (not listed).
      expect(await tolerant(() => other.top(name, 'day', 0, 5))).toBe('draining');
      expect(await setup.redis.keys('*:arch')).not.toEqual([]);
      const instances = [setup.ranking, other];
      let calls = 0;
      let listed: Awaited<ReturnType<RankingService['archives']>> | 'draining' = 'draining';
      for (; listed === 'draining' || listed.periods.length === 0; calls++) {
        const instance = instances[calls % 2];
        if (calls % 3 === 0) await instance.expireDue({ leaseMs: 30_000, claimBatch: 10 });
        if (calls % 3 === 1) await tolerant(() => instance.top(name, 'day', 0, 5));
        listed = await tolerant(() => instance.archives(name, 'day', 10, undefined));
        expect(calls).toBeLessThan(200);
      }
      // The scheduler's first pass (up to 100 calls) finishes a single shard alone; what matters is that
      // the archive, however many callers took part, is the period's exact standings, once.
      expect(listed.periods).toEqual([
        {
          from: (DAY_ONE_MS + DAY_MS) / 1000 - 86_400,
          to: (DAY_ONE_MS + DAY_MS) / 1000,
          items: expectedArchive(scores),
          nextOffset: null,
        },
      ]);
      const again = await other.archive(name, 'day', undefined, { offset: 0, limit: TOP });
      expect(again.items).toEqual(expectedArchive(scores));
      // Nothing of the pending archive is left behind, and the new day starts empty.
      const leftovers = await setup.redis.keys('*archrows*');
      expect(leftovers).toEqual([]);
      expect(await setup.redis.keys('*:arch')).toEqual([]);
      expect((await setup.ranking.top(name, 'day', 0, 5)).items).toEqual([]);
      // The archive is the previous listing of the new day.
      const best = expectedArchive(scores)[0];
      const written =
        aggregate === 'sum'
          ? await setup.ranking.increment(name, best.item, 1)
          : await setup.ranking.score(name, best.item, 1);
      expect(written.body.windows.day.previousRank).toBe(1);
    });

    it('a period that ends while the one before is still being archived: both archives, exact, oldest first', async () => {
      clock.setMs(DAY_ONE_MS + 6 * DAY_MS + 3_600_000);
      await setup.ranking.putBoard({
        name: 'chunks-two',
        windows: [{ name: 'day', calendar: 'day', archive: { keep: 3, top: TOP } }],
      });
      const dayOne = Array.from({ length: 60 }, (_, i) => ({ item: `a${i}`, amount: (i % 30) + 1 }));
      await setup.ranking.incrementBatch('chunks-two', dayOne);
      // The next day: its first write crosses the boundary and drains one chunk of day one, no more.
      clock.setMs(DAY_ONE_MS + 7 * DAY_MS + 3_600_000);
      const dayTwo = Array.from({ length: 40 }, (_, i) => ({ item: `b${i}`, amount: 100 + i }));
      await other.incrementBatch('chunks-two', dayTwo);
      expect(await setup.redis.keys('*chunks-two}:day:arch')).toHaveLength(1);
      // A day later nobody has drained day one yet: both days are pending.
      clock.setMs(DAY_ONE_MS + 8 * DAY_MS + 3_600_000);
      await setup.ranking.increment('chunks-two', 'c0', 1);
      expect(await setup.redis.client.hlen((await setup.redis.keys('*chunks-two}:day:arch'))[0])).toBe(2);
      await setup.ranking.expireDue({ leaseMs: 30_000, claimBatch: 10 });
      const page = await other.archives('chunks-two', 'day', 10, undefined);
      const sums = (entries: Array<{ item: string; amount: number }>) =>
        new Map(entries.map(({ item, amount }) => [item, amount]));
      expect(page.periods.map((period) => period.from)).toEqual([
        (DAY_ONE_MS + 7 * DAY_MS) / 1000,
        (DAY_ONE_MS + 6 * DAY_MS) / 1000,
      ]);
      expect(page.periods.map((period) => period.items)).toEqual([
        expectedArchive(sums(dayTwo)),
        expectedArchive(sums(dayOne)),
      ]);
    });

    it('a period whose archive is read before any drain: the read drains it, chunk by chunk, then answers', async () => {
      clock.setMs(DAY_ONE_MS + 3 * DAY_MS + 3_600_000);
      await setup.ranking.putBoard({
        name: 'chunks-read',
        windows: [{ name: 'day', calendar: 'day', archive: { keep: 1, top: 3 } }],
      });
      await setup.ranking.incrementBatch(
        'chunks-read',
        Array.from({ length: 30 }, (_, i) => ({ item: `r${i}`, amount: i + 1 })),
      );
      clock.setMs(DAY_ONE_MS + 4 * DAY_MS);
      const archive = await other.archive('chunks-read', 'day', undefined, { offset: 0, limit: 10 });
      expect(archive.items).toEqual([
        { rank: 1, item: 'r29', score: 30 },
        { rank: 2, item: 'r28', score: 29 },
        { rank: 3, item: 'r27', score: 28 },
      ]);
    });
  });
});
