import { WindowDrainingError } from '../../src/common/errors';
import { MAX_READ_DRAIN_CALLS } from '../../src/ranking/core/ranking.limits';
import { startRankingService } from '../../harness/ranking';
import { TOPOLOGIES } from '../../harness/redis';
import { PASS, T0, T0_SEC, useRankingStore } from '../support/ranking-store';

describe.each(TOPOLOGIES)('ranking store: expiry, likes, reads (real Redis, %s)', (topology) => {
  const world = useRankingStore(topology);
  const { raw } = world;

  describe('expiry', () => {
    it('subtracts a slot once it falls out of the window and deletes it', async () => {
      await world.ranking.increment('b', 'a', 5);
      world.clock.advanceSec(60);
      await world.ranking.increment('b', 'a', 1);
      world.clock.advanceSec(120); // the first 1-minute slot is now outside the 3-minute window
      const top = await world.ranking.top('b', 'm', 0, 10);
      expect(top.items).toEqual([{ rank: 1, item: 'a', score: 1, previousRank: null }]);
      expect(top.from).toBe(T0_SEC + 60);
      expect(top.to).toBe(T0_SEC + 240);
      expect(await world.redis.client.exists(raw(`m:slot:${T0_SEC}`))).toBe(0);
      expect(await world.redis.client.zrange(raw('m:slots'), 0, -1)).toEqual([String(T0_SEC + 60)]);
      expect(await world.redis.client.zscore(raw('h:top'), 'a')).toBe('6');
    });

    it('answers a read exactly while a slot bigger than one chunk drains: it drains chunk by chunk first, never twice', async () => {
      await world.ranking.incrementBatch(
        'b',
        Array.from({ length: 8 }, (_, i) => ({ item: `i${i}`, amount: i + 1 })),
      );
      await world.ranking.increment('b', 'i0', 0 + 100);
      world.clock.advanceSec(60);
      await world.ranking.increment('b', 'i0', 1);
      world.clock.advanceSec(120);
      // 8 fields in chunks of 3: the read's own calls drain them all before it answers.
      const top = await world.ranking.top('b', 'm', 0, 100);
      expect(top.draining).toBe(false);
      expect(top.items).toEqual([{ rank: 1, item: 'i0', score: 1, previousRank: null }]);
      expect(await world.redis.client.exists(raw(`m:slot:${T0_SEC}`))).toBe(0);
      // Extra expiry passes change nothing.
      await world.ranking.expireDue(PASS);
      await world.ranking.expireDue(PASS);
      expect(await world.redis.client.zrevrange(raw('m:top'), 0, -1, 'WITHSCORES')).toEqual(['i0', '1']);
    });

    it('lists nothing from a window that has passed while its slots drain (EXPIRE_CHUNK 3, no scheduler)', async () => {
      await world.ranking.incrementBatch(
        'b',
        Array.from({ length: 7 }, (_, i) => ({ item: `i${i}`, amount: i + 3 })),
      );
      world.clock.advanceSec(60);
      await world.ranking.incrementBatch('b', [
        { item: 'i0', amount: 5 },
        { item: 'i1', amount: 5 },
      ]);
      world.clock.advanceSec(600); // every slot of the 3-minute window has expired
      expect((await world.ranking.top('b', 'm', 0, 100)).items).toEqual([]);
      expect(await world.ranking.item('b', 'm', 'i6')).toMatchObject({ score: 0, rank: null, draining: false });
      expect((await world.ranking.around('b', 'm', 'i0', 3)).items).toEqual([]);
      expect(await world.redis.client.exists(raw('m:top'))).toBe(0);
    });

    it('answers 503 WINDOW_DRAINING, listing nothing, when the expired data outlasts its drain calls', async () => {
      const fields = 3 * MAX_READ_DRAIN_CALLS + 5;
      await world.ranking.incrementBatch(
        'b',
        Array.from({ length: fields }, (_, i) => ({ item: `i${i}`, amount: 1 })),
      );
      world.clock.advanceSec(180);
      await expect(world.ranking.top('b', 'm', 0, 10)).rejects.toBeInstanceOf(WindowDrainingError);
      expect(await world.redis.client.hlen(raw(`m:slot:${T0_SEC}`))).toBe(5); // each call drained one chunk
      // The next read (or the scheduler) drains the rest, then answers exactly.
      expect((await world.ranking.top('b', 'm', 0, 10)).items).toEqual([]);
    });

    it('drains a slot of 1000 fields in one call when the chunk allows it', async () => {
      const { ranking: bigChunks, redisService } = await startRankingService(world.redis, world.clock, {
        EXPIRE_CHUNK: '1200',
      });
      try {
        // Two windows: a batch within WRITE_COST_PER_CALL carries 900 entries, so each slot gets two.
        const fill = async (amount: (i: number) => number) => {
          const entries = Array.from({ length: 1000 }, (_, i) => ({ item: `i${i}`, amount: amount(i) }));
          for (const half of [entries.slice(0, 500), entries.slice(500)]) await bigChunks.incrementBatch('b', half);
        };
        await fill(() => 2);
        world.clock.advanceSec(60);
        await fill((i) => (i % 2 === 0 ? 1 : 2));
        world.clock.advanceSec(120);
        const top = await bigChunks.top('b', 'm', 0, 1000);
        expect(top.draining).toBe(false);
        expect(top.items).toHaveLength(1000);
        expect(top.items.filter((entry) => entry.score === 2)).toHaveLength(500);
        expect(await world.redis.client.zcount(raw('m:top'), '-inf', '+inf')).toBe(1000);
        expect(await world.redis.client.exists(raw(`m:slot:${T0_SEC}`))).toBe(0);
        expect(await world.redis.client.zscore(raw('h:top'), 'i1')).toBe('4');
      } finally {
        await redisService.onApplicationShutdown();
      }
    });

    it('a scheduler pass advances every due board without a request', async () => {
      await world.ranking.increment('b', 'a', 5);
      world.clock.advanceSec(3600);
      expect(await world.ranking.expireDue(PASS)).toEqual({
        visited: 1,
        failures: 0,
        stillDraining: 0,
        skipped: 0,
        timedOut: 0,
      });
      expect(await world.redis.client.exists(raw('m:top'), raw('h:top'), raw('m:slots'), raw('h:slots'))).toBe(0);
    });
  });

  describe('likes', () => {
    it('counts a like once per user while it is inside any window, and records it', async () => {
      const first = (await world.ranking.like('b', 'p', 'u1', false)).body;
      expect(first).toMatchObject({
        counted: true,
        windows: { m: { score: 1, rank: 1, previousRank: null }, h: { score: 1, rank: 1, previousRank: null } },
      });
      expect(await world.redis.client.zscore(raw('likes'), 'p\x1fu1')).toBe(String(T0));
      world.clock.advanceSec(600); // out of the 3-minute window, still inside the hour
      expect((await world.ranking.like('b', 'p', 'u1', false)).body.counted).toBe(false);
      expect((await world.ranking.like('b', 'p', 'u2', false)).body.windows.h).toEqual({
        score: 2,
        rank: 1,
        previousRank: null,
      });
      world.clock.advanceSec(3600); // out of every window: a new like counts again
      expect((await world.ranking.like('b', 'p', 'u1', false)).body.windows).toEqual({
        m: { score: 1, rank: 1, previousRank: null },
        h: { score: 1, rank: 1, previousRank: null },
      });
    });

    it('unlike takes the like out of the windows that still hold it', async () => {
      await world.ranking.like('b', 'p', 'u1', false);
      await world.ranking.increment('b', 'p', 4);
      world.clock.advanceSec(200); // the like's minute slot has left the 3-minute window
      const undone = (await world.ranking.like('b', 'p', 'u1', true)).body;
      expect(undone).toMatchObject({
        counted: true,
        windows: { m: { score: 0, rank: null, previousRank: null }, h: { score: 4, rank: 1, previousRank: null } },
      });
      expect(await world.redis.client.zscore(raw('likes'), 'p\x1fu1')).toBeNull();
      expect(await world.redis.client.hget(raw(`h:slot:${T0_SEC}`), 'p')).toBe('4');
      expect((await world.ranking.like('b', 'p', 'u1', true)).body.counted).toBe(false);
    });

    it('prunes likes that left every window', async () => {
      await world.ranking.like('b', 'p', 'u1', false);
      world.clock.advanceSec(7200);
      await world.ranking.expireDue(PASS);
      expect(await world.redis.client.exists(raw('likes'))).toBe(0);
    });

    it('does not take a like out of a window remade by a reset after it', async () => {
      await world.ranking.like('b', 'p', 'u1', false);
      world.clock.advanceSec(1);
      await world.putB({ m: '4m', reset: true });
      await world.ranking.increment('b', 'p', 2);
      const undone = (await world.ranking.like('b', 'p', 'u1', true)).body;
      expect(undone.windows).toEqual({
        m: { score: 2, rank: 1, previousRank: null },
        h: { score: 2, rank: 1, previousRank: null },
      });
    });
  });

  describe('reads', () => {
    beforeEach(async () => {
      await world.ranking.incrementBatch('b', [
        { item: 'a', amount: 9 },
        { item: 'b', amount: 5 },
        { item: 'c', amount: 5 },
        { item: 'd', amount: 1 },
        { item: 'e', amount: -2 },
      ]);
    });

    it('top pages with competition ranks; ties in descending byte order', async () => {
      expect((await world.ranking.top('b', undefined, 0, 10)).items).toEqual([
        { rank: 1, item: 'a', score: 9, previousRank: null },
        { rank: 2, item: 'c', score: 5, previousRank: null },
        { rank: 2, item: 'b', score: 5, previousRank: null },
        { rank: 4, item: 'd', score: 1, previousRank: null },
      ]);
      expect((await world.ranking.top('b', 'h', 2, 2)).items).toEqual([
        { rank: 2, item: 'b', score: 5, previousRank: null },
        { rank: 4, item: 'd', score: 1, previousRank: null },
      ]);
      expect((await world.ranking.top('b', 'h', 4, 2)).items).toEqual([]);
    });

    it('item answers score, rank and percentile', async () => {
      expect(await world.ranking.item('b', 'h', 'a')).toMatchObject({ score: 9, rank: 1, percentile: 100 });
      expect(await world.ranking.item('b', 'h', 'b')).toMatchObject({ score: 5, rank: 2, percentile: 66.67 });
      expect(await world.ranking.item('b', 'h', 'd')).toMatchObject({ score: 1, rank: 4, percentile: 0 });
      expect(await world.ranking.item('b', 'h', 'zz')).toMatchObject({ score: 0, rank: null, percentile: null });
      expect(await world.ranking.item('b', 'h', 'e')).toMatchObject({ score: -2, rank: null, percentile: null });
    });

    it('around answers the item with its neighbours', async () => {
      expect((await world.ranking.around('b', 'm', 'c', 1)).items).toEqual([
        { rank: 1, item: 'a', score: 9, previousRank: null },
        { rank: 2, item: 'c', score: 5, previousRank: null },
        { rank: 2, item: 'b', score: 5, previousRank: null },
      ]);
      expect((await world.ranking.around('b', 'm', 'd', 2)).items.map((i) => i.item)).toEqual(['c', 'b', 'd']);
      expect((await world.ranking.around('b', 'm', 'e', 2)).items).toEqual([]);
    });

    it('an unknown window is a 404 naming the windows', async () => {
      await expect(world.ranking.top('b', 'week', 0, 10)).rejects.toThrow(
        /window "week" does not exist on board "b" \(windows: m, h\)/,
      );
    });
  });
});
