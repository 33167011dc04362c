import { RankingKeys } from '../../../src/ranking/core/ranking.keys';
import { useRankingService } from '../../../harness/ranking';
import { TOPOLOGIES } from '../../../harness/redis';

const T0 = 1_700_002_800_000; // an hour boundary (unix ms)
const T0_SEC = T0 / 1000;
const WINDOWS = [
  { name: 'm', period: '3m', interval: '1m' },
  { name: 'h', period: '1h', interval: '10m' },
];
// Enough items for every shard of 3 to hold some.
const ITEMS = Array.from({ length: 24 }, (_, i) => `i${String(i).padStart(2, '0')}`);

/**
 * The shard's slot due (cfg field slotDueSec, slot_due_lib.lua): a call before it asks nothing to learn
 * that no slot expired. It must never let a read list expired data: not right after a boundary with no
 * write in between, not when the field is absent (a board older than it) or stale (a board put that
 * changed the periods), not when a timestamped event indexes a slot older than every other.
 */
describe.each(TOPOLOGIES)('the shard slot due keeps reads exact (real Redis, %s)', (topology) => {
  describe.each([1, 3])('shards: %i', (shards) => {
    const ctx = useRankingService(topology, { EXPIRE_CHUNK: '3' });
    const cfgKeys = () => {
      const keys = new RankingKeys(ctx.redis.prefix);
      return Array.from({ length: shards }, (_, shard) => keys.board('b', shard).cfg());
    };
    const dues = () => Promise.all(cfgKeys().map((key) => ctx.redis.client.hget(key, 'slotDueSec')));
    const listed = async (window: string, segment?: string) =>
      (await ctx.ranking.top('b', window, 0, 100, { segment })).items.map((row) => row.item).sort();

    beforeEach(async () => {
      ctx.clock.setMs(T0);
      await ctx.ranking.deleteBoard('b').catch(() => undefined);
      await ctx.ranking.putBoard({ name: 'b', windows: WINDOWS, shards, segmentsMax: 5 });
    });

    it('stores the earliest due of the oldest slots once a write has checked every window', async () => {
      expect(await dues()).toEqual(Array(shards).fill(null));
      for (const item of ITEMS) await ctx.ranking.increment('b', item, 1);
      // The first write of each shard found no slot (no slot due), then indexed m's slot of T0: due at T0 + 3m.
      expect(new Set(await dues())).toEqual(new Set([String(T0_SEC + 180)]));
      ctx.clock.setMs(T0 + 60_000);
      for (const item of ITEMS) await ctx.ranking.increment('b', item, 1);
      expect(new Set(await dues())).toEqual(new Set([String(T0_SEC + 180)]));
    });

    it('a read right after the boundary, with no write since, lists nothing that expired', async () => {
      for (const item of ITEMS) await ctx.ranking.increment('b', item, 1);
      ctx.clock.setMs(T0 + 120_000);
      await ctx.ranking.increment('b', 'late', 1);
      ctx.clock.setMs(T0 + 179_999);
      expect(await listed('m')).toEqual([...ITEMS, 'late'].sort());
      ctx.clock.setMs(T0 + 180_000);
      expect(await listed('m')).toEqual(['late']);
      expect(await ctx.ranking.item('b', 'm', 'i00')).toMatchObject({ score: 0, rank: null });
      expect(await listed('h')).toEqual([...ITEMS, 'late'].sort());
    });

    it('with the field absent (a board older than it), reads and writes expire as before, then store it', async () => {
      for (const item of ITEMS) await ctx.ranking.increment('b', item, 1);
      for (const key of cfgKeys()) await ctx.redis.client.hdel(key, 'slotDueSec');
      ctx.clock.setMs(T0 + 180_000);
      expect(await listed('m')).toEqual([]);
      expect(await dues()).toEqual(Array(shards).fill(null));
      for (const item of ITEMS) await ctx.ranking.increment('b', item, 2);
      expect(await listed('m')).toEqual(ITEMS);
      expect(await listed('h')).toEqual(ITEMS);
      expect(await ctx.ranking.item('b', 'h', 'i00')).toMatchObject({ score: 3 });
      expect(new Set(await dues())).toEqual(new Set([String(T0_SEC + 360)]));
    });

    it('a stale field (already reached) makes calls check as before until a write stores the new one', async () => {
      for (const item of ITEMS) await ctx.ranking.increment('b', item, 1);
      for (const key of cfgKeys()) await ctx.redis.client.hset(key, 'slotDueSec', String(T0_SEC));
      ctx.clock.setMs(T0 + 60_000);
      expect(await listed('m')).toEqual(ITEMS);
      await ctx.ranking.incrementBatch(
        'b',
        ITEMS.map((item) => ({ item, amount: 1 })),
      );
      expect(new Set(await dues())).toEqual(new Set([String(T0_SEC + 180)]));
      ctx.clock.setMs(T0 + 180_000);
      expect(await ctx.ranking.item('b', 'm', 'i00')).toMatchObject({ score: 1 });
    });

    it('a board put clears the field: the periods it was found for may have changed', async () => {
      const hour = [{ name: 'm', period: '1h', interval: '1m' }];
      await ctx.ranking.putBoard({ name: 'b', windows: hour, shards, reset: true });
      for (const item of ITEMS) await ctx.ranking.increment('b', item, 1);
      expect(new Set(await dues())).toEqual(new Set([String(T0_SEC + 3600)]));
      await ctx.ranking.putBoard({ name: 'b', windows: WINDOWS, shards, reset: true });
      expect(await dues()).toEqual(Array(shards).fill(null));
      for (const key of cfgKeys()) expect(await ctx.redis.client.hget(key, 'indexedSec')).toBeNull();
      for (const item of ITEMS) await ctx.ranking.increment('b', item, 1);
      expect(new Set(await dues())).toEqual(new Set([String(T0_SEC + 180)]));
      ctx.clock.setMs(T0 + 180_000);
      expect(await listed('m')).toEqual([]);
    });

    it('a timestamped event indexing an older slot moves the due earlier', async () => {
      ctx.clock.setMs(T0 + 120_000);
      for (const item of ITEMS) await ctx.ranking.increment('b', item, 1);
      expect(new Set(await dues())).toEqual(new Set([String(T0_SEC + 300)]));
      await ctx.ranking.increment('b', 'old', 5, undefined, undefined, T0_SEC + 10);
      await ctx.ranking.incrementBatch('b', [{ item: 'older', amount: 5, at: T0_SEC + 5 }]);
      expect(await listed('m')).toEqual([...ITEMS, 'old', 'older'].sort());
      ctx.clock.setMs(T0 + 180_000);
      expect(await listed('m')).toEqual(ITEMS);
      expect(await ctx.ranking.item('b', 'm', 'old')).toMatchObject({ score: 0, rank: null });
      expect(await listed('h')).toEqual([...ITEMS, 'old', 'older'].sort());
    });

    it("a like in a slot older than the indexed second's is indexed: it expires with its slot", async () => {
      ctx.clock.setMs(T0 + 120_000);
      for (const item of ITEMS) await ctx.ranking.increment('b', item, 1);
      // m's slot of T0, which no write indexed: the indexed second (T0 + 2m) is in m's period from T0, not its slot.
      await ctx.ranking.like('b', 'liked', 'ann', false, undefined, undefined, T0_SEC + 10);
      expect(await listed('m')).toEqual([...ITEMS, 'liked'].sort());
      ctx.clock.setMs(T0 + 180_000);
      expect(await listed('m')).toEqual(ITEMS);
      expect(await ctx.ranking.item('b', 'm', 'liked')).toMatchObject({ score: 0, rank: null });
      expect(await listed('h')).toEqual([...ITEMS, 'liked'].sort());
    });

    it("a segment's windows are checked as before: the shard's due does not cover them", async () => {
      for (const item of ITEMS) await ctx.ranking.increment('b', item, 1);
      ctx.clock.setMs(T0 + 120_000);
      await ctx.ranking.increment('b', 'late', 1, undefined, undefined, undefined, undefined, ['s']);
      await ctx.ranking.increment('b', 'early', 1, undefined, undefined, T0_SEC + 1, undefined, ['s']);
      expect(await listed('m', 's')).toEqual(['early', 'late']);
      ctx.clock.setMs(T0 + 180_000);
      expect(await listed('m', 's')).toEqual(['late']);
      expect(await listed('m')).toEqual(['late']);
    });

    it('an increment at now keeps its slots as indexed; one after another instance expired them indexes them again', async () => {
      const indexed = () => Promise.all(cfgKeys().map((key) => ctx.redis.client.hget(key, 'indexedSec')));
      for (const item of ITEMS) await ctx.ranking.increment('b', item, 1);
      expect(new Set(await indexed())).toEqual(new Set([String(T0_SEC)]));
      // An instance whose clock is ahead expires m's slot of T0 (the scheduler); one behind still writes there.
      ctx.clock.setMs(T0 + 180_000);
      expect(await ctx.ranking.expireDue({ leaseMs: 60_000, claimBatch: 10 })).toMatchObject({ failures: 0 });
      expect(await indexed()).toEqual(Array(shards).fill(null));
      ctx.clock.setMs(T0 + 30_000);
      for (const item of ITEMS) await ctx.ranking.increment('b', item, 1);
      expect(await listed('m')).toEqual(ITEMS);
      // Indexed again, so it expires with its slot instead of staying in the results.
      ctx.clock.setMs(T0 + 180_000);
      expect(await listed('m')).toEqual([]);
      expect(await ctx.ranking.item('b', 'h', 'i00')).toMatchObject({ score: 2 });
    });

    it('a batch at now keeps its slots as indexed too, and indexes them again once another instance expired them', async () => {
      const indexed = () => Promise.all(cfgKeys().map((key) => ctx.redis.client.hget(key, 'indexedSec')));
      const batch = () =>
        ctx.ranking.incrementBatch(
          'b',
          ITEMS.map((item) => ({ item, amount: 1 })),
        );
      await batch();
      expect(new Set(await indexed())).toEqual(new Set([String(T0_SEC)]));
      ctx.clock.setMs(T0 + 180_000);
      expect(await ctx.ranking.expireDue({ leaseMs: 60_000, claimBatch: 10 })).toMatchObject({ failures: 0 });
      expect(await indexed()).toEqual(Array(shards).fill(null));
      ctx.clock.setMs(T0 + 30_000);
      await batch();
      expect(await listed('m')).toEqual(ITEMS);
      ctx.clock.setMs(T0 + 180_000);
      expect(await listed('m')).toEqual([]);
      expect(await ctx.ranking.item('b', 'h', 'i00')).toMatchObject({ score: 2 });
    });

    it("the scheduler's expire drains what is due and stores the next due it finds", async () => {
      for (const item of ITEMS) await ctx.ranking.increment('b', item, 1);
      ctx.clock.setMs(T0 + 180_000);
      expect(await ctx.ranking.expireDue({ leaseMs: 60_000, claimBatch: 10 })).toMatchObject({ failures: 0 });
      // m's slot of T0 is gone; h's (10 min slots, 1 h) leaves at T0 + 1 h.
      expect(new Set(await dues())).toEqual(new Set([String(T0_SEC + 3600)]));
      expect(await listed('m')).toEqual([]);
      expect(await listed('h')).toEqual(ITEMS);
    });
  });
});
