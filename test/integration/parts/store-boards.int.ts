import { ConflictError, InvalidInputError, NotFoundError } from '../../../src/common/errors';
import { TOPOLOGIES } from '../../../harness/redis';
import { windowsFromStored } from '../../../src/ranking/boards/stored-windows';
import { PASS, T0, T0_SEC, useRankingStore } from '../../support/ranking-store';

describe.each(TOPOLOGIES)('ranking store: board_put, board_delete, increment (real Redis, %s)', (topology) => {
  const world = useRankingStore(topology);
  const { raw, boardKeys } = world;

  describe('board_put / board_delete', () => {
    it('stores the config and registers the board', async () => {
      const cfg = await world.redis.client.hgetall(raw('cfg'));
      expect(cfg.shards).toBe('1');
      expect(windowsFromStored(cfg.windows)).toEqual([
        { name: 'm', periodSec: 180, intervalSec: 60, createdAtMs: T0 },
        { name: 'h', periodSec: 3600, intervalSec: 3600, createdAtMs: T0 },
      ]);
      expect(await world.redis.client.zrange(`${world.redis.prefix}boards:names`, 0, -1)).toEqual(['b']);
    });

    it('is idempotent: an identical put keeps the version', async () => {
      const before = await world.redis.client.hget(raw('cfg'), 'version');
      const again = await world.ranking.putBoard({
        name: 'b',
        windows: [
          { name: 'm', period: 180, interval: 60 },
          { name: 'h', period: '1h', interval: '1h' },
        ],
      });
      expect(again.created).toBe(false);
      expect(await world.redis.client.hget(raw('cfg'), 'version')).toBe(before);
    });

    it('refuses a changed or removed window with 409, and keeps the data', async () => {
      await world.ranking.increment('b', 'x', 1);
      await expect(world.putB({ m: '4m' })).rejects.toThrow(ConflictError);
      await expect(
        world.ranking.putBoard({ name: 'b', windows: [{ name: 'm', period: '3m', interval: '1m' }] }),
      ).rejects.toThrow(/window h would be removed/);
      expect(await world.redis.client.zscore(raw('m:top'), 'x')).toBe('1');
    });

    it('adds a window without touching the others; reset drops only the changed window', async () => {
      await world.ranking.increment('b', 'x', 2);
      await world.putB({ also: [{ name: 'd', period: '1d', interval: '1h' }] });
      expect(await world.redis.client.zscore(raw('m:top'), 'x')).toBe('2');
      await world.putB({ m: '5m', reset: true });
      expect(await boardKeys()).toEqual([raw('cfg'), raw(`h:slot:${T0_SEC}`), raw('h:slots'), raw('h:top')].sort());
    });

    it('gives every shard of a sharded board the same config under its own tag', async () => {
      const put = await world.ranking.putBoard({
        name: 's',
        windows: [{ name: 'h', period: '1h', interval: '1h' }],
        shards: 4,
      });
      expect(put).toMatchObject({ created: true, board: { shards: 4 } });
      const versions = await Promise.all(
        [0, 1, 2, 3].map((k) =>
          world.redis.client.hget(k === 0 ? raw('cfg', 's') : `{${world.redis.prefix}board:s/${k}}:cfg`, 'version'),
        ),
      );
      expect(new Set(versions).size).toBe(1);
      expect(versions[0]).toBeTruthy();
      for (let i = 0; i < 40; i++) await world.ranking.increment('s', `item-${i}`, 1);
      const tags = new Set((await world.redis.keys(`board:s*`)).map((key) => key.slice(0, key.indexOf('}') + 1)));
      expect(tags.size).toBe(4);
    });

    it('changes shards only with reset, dropping the data and the shards no longer used', async () => {
      await world.ranking.putBoard({ name: 's', windows: [{ name: 'h', period: '1h', interval: '1h' }], shards: 4 });
      for (let i = 0; i < 20; i++) await world.ranking.increment('s', `item-${i}`, 1);
      await expect(
        world.ranking.putBoard({ name: 's', windows: [{ name: 'h', period: '1h', interval: '1h' }], shards: 2 }),
      ).rejects.toThrow(/shards would change from 4 to 2/);
      expect((await world.ranking.top('s', 'h', 0, 100)).items).toHaveLength(20);
      await world.ranking.putBoard({
        name: 's',
        windows: [{ name: 'h', period: '1h', interval: '1h' }],
        shards: 2,
        reset: true,
      });
      expect((await world.ranking.top('s', 'h', 0, 100)).items).toEqual([]);
      expect((await world.redis.keys(`board:s/2}*`)).concat(await world.redis.keys(`board:s/3}*`))).toEqual([]);
      await world.ranking.increment('s', 'x', 3);
      expect((await world.ranking.item('s', 'h', 'x')).rank).toBe(1);
    });

    it('reloads its function library after the server lost it (FCALL of a missing function loads it again)', async () => {
      const flushScripts = world.redis.flushScripts;
      if (!flushScripts) return; // a shared server's scripts are the other files' too
      await world.ranking.increment('b', 'x', 2);
      await flushScripts();
      expect((await world.ranking.increment('b', 'x', 3)).body.windows.m).toEqual({
        score: 5,
        rank: 1,
        previousRank: null,
      });
      await flushScripts();
      expect((await world.ranking.top('b', 'm', 0, 10)).items).toEqual([
        { rank: 1, item: 'x', score: 5, previousRank: null },
      ]);
      await flushScripts();
      await world.ranking.putBoard({ name: 's', windows: [{ name: 'h', period: '1h', interval: '1h' }], shards: 3 });
      await flushScripts();
      expect((await world.ranking.expireDue(PASS)).failures).toBe(0);
    });

    it('delete removes the keys of every shard', async () => {
      await world.ranking.putBoard({ name: 's', windows: [{ name: 'h', period: '1h', interval: '1h' }], shards: 3 });
      for (let i = 0; i < 20; i++) await world.ranking.like('s', `item-${i}`, 'u', false);
      await world.ranking.deleteBoard('s');
      expect(await world.redis.keys(`board:s*`)).toEqual([]);
      await expect(world.ranking.getBoard('s')).rejects.toThrow(NotFoundError);
    });

    it('delete removes every key of the board, and only that board', async () => {
      await world.ranking.putBoard({ name: 'other', windows: [{ period: '1h', interval: '1m' }] });
      await world.ranking.increment('other', 'x', 1);
      await world.ranking.increment('b', 'x', 1);
      world.clock.advanceSec(61);
      await world.ranking.increment('b', 'y', 1);
      await world.ranking.like('b', 'x', 'u', false);
      expect((await boardKeys()).length).toBeGreaterThan(5);
      await world.ranking.deleteBoard('b');
      expect(await world.redis.keys('board:b}*')).toEqual([]); // stored answers too, the service's own keys included
      expect(await world.redis.client.zrange(`${world.redis.prefix}boards:names`, 0, -1)).toEqual(['other']);
      expect((await boardKeys('other')).length).toBe(4);
      await expect(world.ranking.deleteBoard('b')).rejects.toThrow(NotFoundError);
      await expect(world.ranking.increment('b', 'x', 1)).rejects.toThrow(NotFoundError);
    });
  });

  describe('increment', () => {
    it('writes the slot hash, the slot index and the results of every window, and answers score and rank', async () => {
      await world.ranking.increment('b', 'a', 5);
      const reply = (await world.ranking.increment('b', 'b', 2)).body;
      expect(reply.windows).toEqual({
        m: { score: 2, rank: 2, previousRank: null },
        h: { score: 2, rank: 2, previousRank: null },
      });
      expect(await world.redis.client.hgetall(raw(`m:slot:${T0_SEC}`))).toEqual({ a: '5', b: '2' });
      expect(await world.redis.client.zrange(raw('m:slots'), 0, -1, 'WITHSCORES')).toEqual([
        String(T0_SEC),
        String(T0_SEC),
      ]);
      expect(await world.redis.client.zrevrange(raw('h:top'), 0, -1, 'WITHSCORES')).toEqual(['a', '5', 'b', '2']);
    });

    it('refuses, from a library caller, an amount that is no exact non-zero integer, before anything is written', async () => {
      for (const amount of [0, 1.5, 2 ** 53, -(2 ** 53), 2 ** 56, Number.NaN]) {
        await expect(world.ranking.increment('b', 'z', amount)).rejects.toThrow(
          new InvalidInputError('amount must be a non-zero integer from -9007199254740991 to 9007199254740991'),
        );
        await expect(
          world.ranking.incrementBatch('b', [
            { item: 'y', amount: 1 },
            { item: 'z', amount },
          ]),
        ).rejects.toThrow(
          new InvalidInputError('items.1.amount must be a non-zero integer from -9007199254740991 to 9007199254740991'),
        );
      }
      expect(await world.redis.client.zscore(raw('h:top'), 'y')).toBeNull();
      expect(await world.redis.client.zscore(raw('h:top'), 'z')).toBeNull();
    });

    it('answers competition ranks (1, 2, 2, 4)', async () => {
      await world.ranking.increment('b', 'a', 9);
      await world.ranking.increment('b', 'b', 5);
      await world.ranking.increment('b', 'c', 5);
      const reply = (await world.ranking.increment('b', 'd', 1)).body;
      expect(reply.windows.m).toEqual({ score: 1, rank: 4, previousRank: null });
      expect((await world.ranking.increment('b', 'd', 4)).body.windows.m).toEqual({
        score: 5,
        rank: 2,
        previousRank: null,
      });
    });

    it('keeps a negative sum exact but unranked, and drops an item whose sum is exactly 0', async () => {
      expect((await world.ranking.increment('b', 'n', -3)).body.windows.m).toEqual({
        score: -3,
        rank: null,
        previousRank: null,
      });
      expect((await world.ranking.increment('b', 'n', 5)).body.windows.m).toEqual({
        score: 2,
        rank: 1,
        previousRank: null,
      });
      expect((await world.ranking.increment('b', 'n', -2)).body.windows.m).toEqual({
        score: 0,
        rank: null,
        previousRank: null,
      });
      expect(await world.redis.client.zscore(raw('m:top'), 'n')).toBeNull();
      expect(await world.redis.client.hexists(raw(`m:slot:${T0_SEC}`), 'n')).toBe(0);
      expect((await world.ranking.top('b', 'm', 0, 10)).items).toEqual([]);
    });

    it('batch applies every entry to every window in one step', async () => {
      const reply = (
        await world.ranking.incrementBatch('b', [
          { item: 'a', amount: 2 },
          { item: 'b', amount: 1 },
          { item: 'a', amount: 3 },
        ])
      ).body;
      expect(reply).toMatchObject({ board: 'b', count: 3 });
      expect(await world.redis.client.hgetall(raw(`h:slot:${T0_SEC}`))).toEqual({ a: '5', b: '1' });
      expect(await world.redis.client.zrevrange(raw('m:top'), 0, -1, 'WITHSCORES')).toEqual(['a', '5', 'b', '1']);
    });

    it('batch: 900 entries (the most WRITE_COST_PER_CALL takes on two windows) with repeats, and sums reaching 0 or below, in one step', async () => {
      await world.ranking.increment('b', 'gone', 4);
      await world.ranking.increment('b', 'minus', 1);
      const entries = Array.from({ length: 895 }, (_, i) => ({ item: `i${i % 800}`, amount: (i % 7) + 1 }));
      entries.push(
        { item: 'gone', amount: -1 },
        { item: 'gone', amount: -3 },
        { item: 'minus', amount: -3 },
        { item: 'net0', amount: 2 },
        { item: 'net0', amount: -2 },
      );
      expect((await world.ranking.incrementBatch('b', entries)).body.count).toBe(900);
      const expected = new Map<string, number>();
      for (let i = 0; i < 895; i++) expected.set(`i${i % 800}`, (expected.get(`i${i % 800}`) ?? 0) + (i % 7) + 1);
      expected.set('minus', -2);
      for (const key of [raw(`m:slot:${T0_SEC}`), raw(`h:slot:${T0_SEC}`)]) {
        const slot = await world.redis.client.hgetall(key);
        expect(Object.keys(slot)).toHaveLength(801);
        for (const [item, sum] of expected) expect(slot[item]).toBe(String(sum));
      }
      for (const key of [raw('m:top'), raw('h:top')]) {
        expect(await world.redis.client.zcard(key)).toBe(801);
        expect(await world.redis.client.zscore(key, 'gone')).toBeNull();
        expect(await world.redis.client.zscore(key, 'net0')).toBeNull();
        expect(await world.redis.client.zscore(key, 'minus')).toBe('-2');
        expect(await world.redis.client.zscore(key, 'i3')).toBe(String(expected.get('i3')));
      }
    });

    it('batch keeps slot sums past 2^53 exact (64-bit integers, not doubles)', async () => {
      await world.ranking.increment('b', 'big', 2 ** 53 - 1);
      await world.ranking.incrementBatch('b', [
        { item: 'big', amount: 2 },
        { item: 'small', amount: 1 },
      ]);
      expect(await world.redis.client.hget(raw(`m:slot:${T0_SEC}`), 'big')).toBe('9007199254740993');
      expect(await world.redis.client.hget(raw(`m:slot:${T0_SEC}`), 'small')).toBe('1');
    });
  });
});
