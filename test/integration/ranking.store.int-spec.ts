import { FakeClock } from '../support/clock';
import { validateConfig } from '../../src/common/config';
import { ConflictError, InvalidInputError, NotFoundError, WindowDrainingError } from '../../src/common/errors';
import { RedisService } from '../../src/redis/redis.service';
import { RedisFunctions } from '../../src/redis/redis-functions';
import { MAX_READ_DRAIN_CALLS, MAX_SHARDED_DEPTH_ITEMS } from '../../src/ranking/core/ranking.limits';
import { RankingService } from '../../src/ranking/ranking.service';
import { RankingKeys } from '../../src/ranking/core/ranking.keys';
import { RANKING } from '../../src/ranking/ranking.functions';
import { WindowSpec } from '../../src/ranking/core/window-math';
import { shardOf } from '../../src/ranking/core/shard-math';
import { rankingServiceOn, startRankingService } from '../support/ranking';
import { BoardCache } from '../../src/ranking/boards/board-cache';
import { BoardsStore } from '../../src/ranking/boards/boards.store';
import { StaleConfigError } from '../../src/ranking/core/ranking.errors';
import { startTestRedis, TestRedis, TOPOLOGIES } from '../support/redis';
import { RankingSettings } from '../../src/ranking/core/ranking.settings';

const T0 = 1_700_002_800_000; // an hour boundary (unix ms)
const T0_SEC = T0 / 1000;
/** A scheduler pass's options (the defaults of the configuration). */
const PASS = { leaseMs: 30_000, claimBatch: 100 };

describe.each(TOPOLOGIES)('ranking scripts through the store (real Redis, %s)', (topology) => {
  let redis: TestRedis;
  let service: RedisService;
  let functions: RedisFunctions;
  let ranking: RankingService;
  let clock: FakeClock;
  const raw = (key: string, board = 'b') => `{${redis.prefix}board:${board}}:${key}`;
  const boardKeys = async (board = 'b') => (await redis.dataKeys(`board:${board}}*`)).sort();

  beforeAll(async () => {
    redis = await startTestRedis(topology);
    clock = new FakeClock(T0);
    ({ ranking, redisService: service, functions } = await startRankingService(redis, clock, { EXPIRE_CHUNK: '3' }));
  });
  afterAll(async () => {
    await service.onApplicationShutdown();
    await redis.stop();
  });
  beforeEach(async () => {
    await redis.clear();
    clock.setMs(T0);
    await ranking.putBoard({
      name: 'b',
      windows: [
        { name: 'm', period: '3m', interval: '1m' },
        { name: 'h', period: '1h', interval: '1h' },
      ],
    });
  });

  describe('board_put / board_delete', () => {
    it('stores the config and registers the board', async () => {
      const cfg = await redis.client.hgetall(raw('cfg'));
      expect(cfg.shards).toBe('1');
      expect(JSON.parse(cfg.windows)).toEqual([
        { name: 'm', periodSec: 180, intervalSec: 60, createdAtMs: T0 },
        { name: 'h', periodSec: 3600, intervalSec: 3600, createdAtMs: T0 },
      ]);
      expect(await redis.client.zrange(`${redis.prefix}boards:names`, 0, -1)).toEqual(['b']);
    });

    it('is idempotent: an identical put keeps the version', async () => {
      const before = await redis.client.hget(raw('cfg'), 'version');
      const again = await ranking.putBoard({
        name: 'b',
        windows: [
          { name: 'm', period: 180, interval: 60 },
          { name: 'h', period: '1h', interval: '1h' },
        ],
      });
      expect(again.created).toBe(false);
      expect(await redis.client.hget(raw('cfg'), 'version')).toBe(before);
    });

    it('refuses a changed or removed window with 409, and keeps the data', async () => {
      await ranking.increment('b', 'x', 1);
      await expect(
        ranking.putBoard({
          name: 'b',
          windows: [
            { name: 'm', period: '4m', interval: '1m' },
            { name: 'h', period: '1h', interval: '1h' },
          ],
        }),
      ).rejects.toThrow(ConflictError);
      await expect(
        ranking.putBoard({ name: 'b', windows: [{ name: 'm', period: '3m', interval: '1m' }] }),
      ).rejects.toThrow(/window h would be removed/);
      expect(await redis.client.zscore(raw('m:top'), 'x')).toBe('1');
    });

    it('adds a window without touching the others; reset drops only the changed window', async () => {
      await ranking.increment('b', 'x', 2);
      await ranking.putBoard({
        name: 'b',
        windows: [
          { name: 'm', period: '3m', interval: '1m' },
          { name: 'h', period: '1h', interval: '1h' },
          { name: 'd', period: '1d', interval: '1h' },
        ],
      });
      expect(await redis.client.zscore(raw('m:top'), 'x')).toBe('2');
      await ranking.putBoard({
        name: 'b',
        windows: [
          { name: 'm', period: '5m', interval: '1m' },
          { name: 'h', period: '1h', interval: '1h' },
        ],
        shards: 1,
        reset: true,
      });
      expect(await boardKeys()).toEqual([raw('cfg'), raw(`h:slot:${T0_SEC}`), raw('h:slots'), raw('h:top')].sort());
    });

    it('gives every shard of a sharded board the same config under its own tag', async () => {
      const put = await ranking.putBoard({
        name: 's',
        windows: [{ name: 'h', period: '1h', interval: '1h' }],
        shards: 4,
      });
      expect(put).toMatchObject({ created: true, board: { shards: 4 } });
      const versions = await Promise.all(
        [0, 1, 2, 3].map((k) =>
          redis.client.hget(k === 0 ? raw('cfg', 's') : `{${redis.prefix}board:s/${k}}:cfg`, 'version'),
        ),
      );
      expect(new Set(versions).size).toBe(1);
      expect(versions[0]).toBeTruthy();
      for (let i = 0; i < 40; i++) await ranking.increment('s', `item-${i}`, 1);
      const tags = new Set((await redis.keys(`board:s*`)).map((key) => key.slice(0, key.indexOf('}') + 1)));
      expect(tags.size).toBe(4);
    });

    it('changes shards only with reset, dropping the data and the shards no longer used', async () => {
      await ranking.putBoard({ name: 's', windows: [{ name: 'h', period: '1h', interval: '1h' }], shards: 4 });
      for (let i = 0; i < 20; i++) await ranking.increment('s', `item-${i}`, 1);
      await expect(
        ranking.putBoard({ name: 's', windows: [{ name: 'h', period: '1h', interval: '1h' }], shards: 2 }),
      ).rejects.toThrow(/shards would change from 4 to 2/);
      expect((await ranking.top('s', 'h', 0, 100)).items).toHaveLength(20);
      await ranking.putBoard({
        name: 's',
        windows: [{ name: 'h', period: '1h', interval: '1h' }],
        shards: 2,
        reset: true,
      });
      expect((await ranking.top('s', 'h', 0, 100)).items).toEqual([]);
      expect((await redis.keys(`board:s/2}*`)).concat(await redis.keys(`board:s/3}*`))).toEqual([]);
      await ranking.increment('s', 'x', 3);
      expect((await ranking.item('s', 'h', 'x')).rank).toBe(1);
    });

    it('reloads its function library after the server lost it (FCALL of a missing function loads it again)', async () => {
      const flushScripts = redis.flushScripts;
      if (!flushScripts) return; // a shared server's scripts are the other files' too
      await ranking.increment('b', 'x', 2);
      await flushScripts();
      expect((await ranking.increment('b', 'x', 3)).body.windows.m).toEqual({ score: 5, rank: 1, previousRank: null });
      await flushScripts();
      expect((await ranking.top('b', 'm', 0, 10)).items).toEqual([
        { rank: 1, item: 'x', score: 5, previousRank: null },
      ]);
      await flushScripts();
      await ranking.putBoard({ name: 's', windows: [{ name: 'h', period: '1h', interval: '1h' }], shards: 3 });
      await flushScripts();
      expect((await ranking.expireDue(PASS)).failures).toBe(0);
    });

    it('delete removes the keys of every shard', async () => {
      await ranking.putBoard({ name: 's', windows: [{ name: 'h', period: '1h', interval: '1h' }], shards: 3 });
      for (let i = 0; i < 20; i++) await ranking.like('s', `item-${i}`, 'u', false);
      await ranking.deleteBoard('s');
      expect(await redis.keys(`board:s*`)).toEqual([]);
      await expect(ranking.getBoard('s')).rejects.toThrow(NotFoundError);
    });

    it('delete removes every key of the board, and only that board', async () => {
      await ranking.putBoard({ name: 'other', windows: [{ period: '1h', interval: '1m' }] });
      await ranking.increment('other', 'x', 1);
      await ranking.increment('b', 'x', 1);
      clock.advanceSec(61);
      await ranking.increment('b', 'y', 1);
      await ranking.like('b', 'x', 'u', false);
      expect((await boardKeys()).length).toBeGreaterThan(5);
      await ranking.deleteBoard('b');
      expect(await redis.keys('board:b}*')).toEqual([]); // stored answers too, the service's own keys included
      expect(await redis.client.zrange(`${redis.prefix}boards:names`, 0, -1)).toEqual(['other']);
      expect((await boardKeys('other')).length).toBe(4);
      await expect(ranking.deleteBoard('b')).rejects.toThrow(NotFoundError);
      await expect(ranking.increment('b', 'x', 1)).rejects.toThrow(NotFoundError);
    });
  });

  describe('increment', () => {
    it('writes the slot hash, the slot index and the results of every window, and answers score and rank', async () => {
      await ranking.increment('b', 'a', 5);
      const reply = (await ranking.increment('b', 'b', 2)).body;
      expect(reply.windows).toEqual({
        m: { score: 2, rank: 2, previousRank: null },
        h: { score: 2, rank: 2, previousRank: null },
      });
      expect(await redis.client.hgetall(raw(`m:slot:${T0_SEC}`))).toEqual({ a: '5', b: '2' });
      expect(await redis.client.zrange(raw('m:slots'), 0, -1, 'WITHSCORES')).toEqual([String(T0_SEC), String(T0_SEC)]);
      expect(await redis.client.zrevrange(raw('h:top'), 0, -1, 'WITHSCORES')).toEqual(['a', '5', 'b', '2']);
    });

    it('refuses, from a library caller, an amount that is no exact non-zero integer, before anything is written', async () => {
      for (const amount of [0, 1.5, 2 ** 53, -(2 ** 53), 2 ** 56, Number.NaN]) {
        await expect(ranking.increment('b', 'z', amount)).rejects.toThrow(
          new InvalidInputError('amount must be a non-zero integer from -9007199254740991 to 9007199254740991'),
        );
        await expect(
          ranking.incrementBatch('b', [
            { item: 'y', amount: 1 },
            { item: 'z', amount },
          ]),
        ).rejects.toThrow(
          new InvalidInputError('items.1.amount must be a non-zero integer from -9007199254740991 to 9007199254740991'),
        );
      }
      expect(await redis.client.zscore(raw('h:top'), 'y')).toBeNull();
      expect(await redis.client.zscore(raw('h:top'), 'z')).toBeNull();
    });

    it('answers competition ranks (1, 2, 2, 4)', async () => {
      await ranking.increment('b', 'a', 9);
      await ranking.increment('b', 'b', 5);
      await ranking.increment('b', 'c', 5);
      const reply = (await ranking.increment('b', 'd', 1)).body;
      expect(reply.windows.m).toEqual({ score: 1, rank: 4, previousRank: null });
      expect((await ranking.increment('b', 'd', 4)).body.windows.m).toEqual({ score: 5, rank: 2, previousRank: null });
    });

    it('keeps a negative sum exact but unranked, and drops an item whose sum is exactly 0', async () => {
      expect((await ranking.increment('b', 'n', -3)).body.windows.m).toEqual({
        score: -3,
        rank: null,
        previousRank: null,
      });
      expect((await ranking.increment('b', 'n', 5)).body.windows.m).toEqual({ score: 2, rank: 1, previousRank: null });
      expect((await ranking.increment('b', 'n', -2)).body.windows.m).toEqual({
        score: 0,
        rank: null,
        previousRank: null,
      });
      expect(await redis.client.zscore(raw('m:top'), 'n')).toBeNull();
      expect(await redis.client.hexists(raw(`m:slot:${T0_SEC}`), 'n')).toBe(0);
      expect((await ranking.top('b', 'm', 0, 10)).items).toEqual([]);
    });

    it('batch applies every entry to every window in one step', async () => {
      const reply = (
        await ranking.incrementBatch('b', [
          { item: 'a', amount: 2 },
          { item: 'b', amount: 1 },
          { item: 'a', amount: 3 },
        ])
      ).body;
      expect(reply).toMatchObject({ board: 'b', count: 3 });
      expect(await redis.client.hgetall(raw(`h:slot:${T0_SEC}`))).toEqual({ a: '5', b: '1' });
      expect(await redis.client.zrevrange(raw('m:top'), 0, -1, 'WITHSCORES')).toEqual(['a', '5', 'b', '1']);
    });

    it('batch: 1205 entries with repeats, and sums reaching 0 or below, in one step', async () => {
      await ranking.increment('b', 'gone', 4);
      await ranking.increment('b', 'minus', 1);
      const entries = Array.from({ length: 1200 }, (_, i) => ({ item: `i${i % 1100}`, amount: (i % 7) + 1 }));
      entries.push(
        { item: 'gone', amount: -1 },
        { item: 'gone', amount: -3 },
        { item: 'minus', amount: -3 },
        { item: 'net0', amount: 2 },
        { item: 'net0', amount: -2 },
      );
      expect((await ranking.incrementBatch('b', entries)).body.count).toBe(1205);
      const expected = new Map<string, number>();
      for (let i = 0; i < 1200; i++) expected.set(`i${i % 1100}`, (expected.get(`i${i % 1100}`) ?? 0) + (i % 7) + 1);
      expected.set('minus', -2);
      for (const key of [raw(`m:slot:${T0_SEC}`), raw(`h:slot:${T0_SEC}`)]) {
        const slot = await redis.client.hgetall(key);
        expect(Object.keys(slot)).toHaveLength(1101);
        for (const [item, sum] of expected) expect(slot[item]).toBe(String(sum));
      }
      for (const key of [raw('m:top'), raw('h:top')]) {
        expect(await redis.client.zcard(key)).toBe(1101);
        expect(await redis.client.zscore(key, 'gone')).toBeNull();
        expect(await redis.client.zscore(key, 'net0')).toBeNull();
        expect(await redis.client.zscore(key, 'minus')).toBe('-2');
        expect(await redis.client.zscore(key, 'i3')).toBe(String(expected.get('i3')));
      }
    });

    it('batch keeps slot sums past 2^53 exact (64-bit integers, not doubles)', async () => {
      await ranking.increment('b', 'big', 2 ** 53 - 1);
      await ranking.incrementBatch('b', [
        { item: 'big', amount: 2 },
        { item: 'small', amount: 1 },
      ]);
      expect(await redis.client.hget(raw(`m:slot:${T0_SEC}`), 'big')).toBe('9007199254740993');
      expect(await redis.client.hget(raw(`m:slot:${T0_SEC}`), 'small')).toBe('1');
    });
  });

  describe('expiry', () => {
    it('subtracts a slot once it falls out of the window and deletes it', async () => {
      await ranking.increment('b', 'a', 5);
      clock.advanceSec(60);
      await ranking.increment('b', 'a', 1);
      clock.advanceSec(120); // the first 1-minute slot is now outside the 3-minute window
      const top = await ranking.top('b', 'm', 0, 10);
      expect(top.items).toEqual([{ rank: 1, item: 'a', score: 1, previousRank: null }]);
      expect(top.from).toBe(T0_SEC + 60);
      expect(top.to).toBe(T0_SEC + 240);
      expect(await redis.client.exists(raw(`m:slot:${T0_SEC}`))).toBe(0);
      expect(await redis.client.zrange(raw('m:slots'), 0, -1)).toEqual([String(T0_SEC + 60)]);
      expect(await redis.client.zscore(raw('h:top'), 'a')).toBe('6');
    });

    it('answers a read exactly while a slot bigger than one chunk drains: it drains chunk by chunk first, never twice', async () => {
      await ranking.incrementBatch(
        'b',
        Array.from({ length: 8 }, (_, i) => ({ item: `i${i}`, amount: i + 1 })),
      );
      await ranking.increment('b', 'i0', 0 + 100);
      clock.advanceSec(60);
      await ranking.increment('b', 'i0', 1);
      clock.advanceSec(120);
      // 8 fields in chunks of 3: the read's own calls drain them all before it answers.
      const top = await ranking.top('b', 'm', 0, 100);
      expect(top.draining).toBe(false);
      expect(top.items).toEqual([{ rank: 1, item: 'i0', score: 1, previousRank: null }]);
      expect(await redis.client.exists(raw(`m:slot:${T0_SEC}`))).toBe(0);
      // Extra expiry passes change nothing.
      await ranking.expireDue(PASS);
      await ranking.expireDue(PASS);
      expect(await redis.client.zrevrange(raw('m:top'), 0, -1, 'WITHSCORES')).toEqual(['i0', '1']);
    });

    it('lists nothing from a window that has passed while its slots drain (EXPIRE_CHUNK 3, no scheduler)', async () => {
      await ranking.incrementBatch(
        'b',
        Array.from({ length: 7 }, (_, i) => ({ item: `i${i}`, amount: i + 3 })),
      );
      clock.advanceSec(60);
      await ranking.incrementBatch('b', [
        { item: 'i0', amount: 5 },
        { item: 'i1', amount: 5 },
      ]);
      clock.advanceSec(600); // every slot of the 3-minute window has expired
      expect((await ranking.top('b', 'm', 0, 100)).items).toEqual([]);
      expect(await ranking.item('b', 'm', 'i6')).toMatchObject({ score: 0, rank: null, draining: false });
      expect((await ranking.around('b', 'm', 'i0', 3)).items).toEqual([]);
      expect(await redis.client.exists(raw('m:top'))).toBe(0);
    });

    it('answers 503 WINDOW_DRAINING, listing nothing, when the expired data outlasts its drain calls', async () => {
      const fields = 3 * MAX_READ_DRAIN_CALLS + 5;
      await ranking.incrementBatch(
        'b',
        Array.from({ length: fields }, (_, i) => ({ item: `i${i}`, amount: 1 })),
      );
      clock.advanceSec(180);
      await expect(ranking.top('b', 'm', 0, 10)).rejects.toBeInstanceOf(WindowDrainingError);
      expect(await redis.client.hlen(raw(`m:slot:${T0_SEC}`))).toBe(5); // each call drained one chunk
      // The next read (or the scheduler) drains the rest, then answers exactly.
      expect((await ranking.top('b', 'm', 0, 10)).items).toEqual([]);
    });

    it('drains a slot of 1000 fields in one call when the chunk allows it', async () => {
      const { ranking: bigChunks, redisService } = await startRankingService(redis, clock, { EXPIRE_CHUNK: '1200' });
      try {
        await bigChunks.incrementBatch(
          'b',
          Array.from({ length: 1000 }, (_, i) => ({ item: `i${i}`, amount: 2 })),
        );
        clock.advanceSec(60);
        await bigChunks.incrementBatch(
          'b',
          Array.from({ length: 1000 }, (_, i) => ({ item: `i${i}`, amount: i % 2 === 0 ? 1 : 2 })),
        );
        clock.advanceSec(120);
        const top = await bigChunks.top('b', 'm', 0, 1000);
        expect(top.draining).toBe(false);
        expect(top.items).toHaveLength(1000);
        expect(top.items.filter((entry) => entry.score === 2)).toHaveLength(500);
        expect(await redis.client.zcount(raw('m:top'), '-inf', '+inf')).toBe(1000);
        expect(await redis.client.exists(raw(`m:slot:${T0_SEC}`))).toBe(0);
        expect(await redis.client.zscore(raw('h:top'), 'i1')).toBe('4');
      } finally {
        await redisService.onApplicationShutdown();
      }
    });

    it('a scheduler pass advances every due board without a request', async () => {
      await ranking.increment('b', 'a', 5);
      clock.advanceSec(3600);
      expect(await ranking.expireDue(PASS)).toEqual({ visited: 1, failures: 0, stillDraining: 0, skipped: 0 });
      expect(await redis.client.exists(raw('m:top'), raw('h:top'), raw('m:slots'), raw('h:slots'))).toBe(0);
    });
  });

  describe('likes', () => {
    it('counts a like once per user while it is inside any window, and records it', async () => {
      const first = (await ranking.like('b', 'p', 'u1', false)).body;
      expect(first).toMatchObject({
        counted: true,
        windows: { m: { score: 1, rank: 1, previousRank: null }, h: { score: 1, rank: 1, previousRank: null } },
      });
      expect(await redis.client.zscore(raw('likes'), 'p\x1fu1')).toBe(String(T0));
      clock.advanceSec(600); // out of the 3-minute window, still inside the hour
      expect((await ranking.like('b', 'p', 'u1', false)).body.counted).toBe(false);
      expect((await ranking.like('b', 'p', 'u2', false)).body.windows.h).toEqual({
        score: 2,
        rank: 1,
        previousRank: null,
      });
      clock.advanceSec(3600); // out of every window: a new like counts again
      expect((await ranking.like('b', 'p', 'u1', false)).body.windows).toEqual({
        m: { score: 1, rank: 1, previousRank: null },
        h: { score: 1, rank: 1, previousRank: null },
      });
    });

    it('unlike takes the like out of the windows that still hold it', async () => {
      await ranking.like('b', 'p', 'u1', false);
      await ranking.increment('b', 'p', 4);
      clock.advanceSec(200); // the like's minute slot has left the 3-minute window
      const undone = (await ranking.like('b', 'p', 'u1', true)).body;
      expect(undone).toMatchObject({
        counted: true,
        windows: { m: { score: 0, rank: null, previousRank: null }, h: { score: 4, rank: 1, previousRank: null } },
      });
      expect(await redis.client.zscore(raw('likes'), 'p\x1fu1')).toBeNull();
      expect(await redis.client.hget(raw(`h:slot:${T0_SEC}`), 'p')).toBe('4');
      expect((await ranking.like('b', 'p', 'u1', true)).body.counted).toBe(false);
    });

    it('prunes likes that left every window', async () => {
      await ranking.like('b', 'p', 'u1', false);
      clock.advanceSec(7200);
      await ranking.expireDue(PASS);
      expect(await redis.client.exists(raw('likes'))).toBe(0);
    });

    it('does not take a like out of a window remade by a reset after it', async () => {
      await ranking.like('b', 'p', 'u1', false);
      clock.advanceSec(1);
      await ranking.putBoard({
        name: 'b',
        windows: [
          { name: 'm', period: '4m', interval: '1m' },
          { name: 'h', period: '1h', interval: '1h' },
        ],
        shards: 1,
        reset: true,
      });
      await ranking.increment('b', 'p', 2);
      const undone = (await ranking.like('b', 'p', 'u1', true)).body;
      expect(undone.windows).toEqual({
        m: { score: 2, rank: 1, previousRank: null },
        h: { score: 2, rank: 1, previousRank: null },
      });
    });
  });

  describe('reads', () => {
    beforeEach(async () => {
      await ranking.incrementBatch('b', [
        { item: 'a', amount: 9 },
        { item: 'b', amount: 5 },
        { item: 'c', amount: 5 },
        { item: 'd', amount: 1 },
        { item: 'e', amount: -2 },
      ]);
    });

    it('top pages with competition ranks; ties in descending byte order', async () => {
      expect((await ranking.top('b', undefined, 0, 10)).items).toEqual([
        { rank: 1, item: 'a', score: 9, previousRank: null },
        { rank: 2, item: 'c', score: 5, previousRank: null },
        { rank: 2, item: 'b', score: 5, previousRank: null },
        { rank: 4, item: 'd', score: 1, previousRank: null },
      ]);
      expect((await ranking.top('b', 'h', 2, 2)).items).toEqual([
        { rank: 2, item: 'b', score: 5, previousRank: null },
        { rank: 4, item: 'd', score: 1, previousRank: null },
      ]);
      expect((await ranking.top('b', 'h', 4, 2)).items).toEqual([]);
    });

    it('item answers score, rank and percentile', async () => {
      expect(await ranking.item('b', 'h', 'a')).toMatchObject({ score: 9, rank: 1, percentile: 100 });
      expect(await ranking.item('b', 'h', 'b')).toMatchObject({ score: 5, rank: 2, percentile: 66.67 });
      expect(await ranking.item('b', 'h', 'd')).toMatchObject({ score: 1, rank: 4, percentile: 0 });
      expect(await ranking.item('b', 'h', 'zz')).toMatchObject({ score: 0, rank: null, percentile: null });
      expect(await ranking.item('b', 'h', 'e')).toMatchObject({ score: -2, rank: null, percentile: null });
    });

    it('around answers the item with its neighbours', async () => {
      expect((await ranking.around('b', 'm', 'c', 1)).items).toEqual([
        { rank: 1, item: 'a', score: 9, previousRank: null },
        { rank: 2, item: 'c', score: 5, previousRank: null },
        { rank: 2, item: 'b', score: 5, previousRank: null },
      ]);
      expect((await ranking.around('b', 'm', 'd', 2)).items.map((i) => i.item)).toEqual(['c', 'b', 'd']);
      expect((await ranking.around('b', 'm', 'e', 2)).items).toEqual([]);
    });

    it('an unknown window is a 404 naming the windows', async () => {
      await expect(ranking.top('b', 'week', 0, 10)).rejects.toThrow(
        /window "week" does not exist on board "b" \(windows: m, h\)/,
      );
    });
  });

  describe('sharded boards while their config changes', () => {
    const H = [{ name: 'h', period: '1h', interval: '1h' }];
    const keysOf = (shard: number) => new RankingKeys(redis.prefix).board('s', shard);
    const cfgOf = (shard: number, board = 's') =>
      shard === 0 ? raw('cfg', board) : `{${redis.prefix}board:${board}/${shard}}:cfg`;
    const itemOnShard = (shard: number, shards: number) =>
      Array.from({ length: 200 }, (_, i) => `item-${i}`).find((id) => shardOf(id, shards) === shard)!;
    /** Runs board_put on shard 0 only: a PUT that stopped before syncing the other shards. */
    const putOnShardZero = (shards: number | undefined, windows: WindowSpec[], reset: boolean) =>
      functions.call(RANKING.functions.boardPut, {
        keys: keysOf(0),
        windows,
        shards,
        maxItems: undefined,
        views: [],
        version: `half-${Math.random()}`,
        reset,
        nowMs: clock.nowMs(),
      });

    it('applies a write once when its rank read meets a PUT in progress, and says so with 409', async () => {
      await ranking.putBoard({ name: 's', windows: H, shards: 3 });
      const item = itemOnShard(1, 3);
      await ranking.increment('s', item, 1); // caches the config
      await putOnShardZero(
        undefined,
        [
          { name: 'h', periodSec: 3600, intervalSec: 3600 },
          { name: 'd', periodSec: 86400, intervalSec: 3600 },
        ],
        false,
      );
      await expect(ranking.increment('s', item, 5)).rejects.toMatchObject({
        code: 'WRITE_APPLIED_RANK_UNKNOWN',
        message: expect.stringMatching(/the write was applied/),
      });
      await ranking.putBoard({ name: 's', windows: [...H, { name: 'd', period: '1d', interval: '1h' }] }); // finishes the sync
      expect((await ranking.item('s', 'h', item)).score).toBe(6);
    });

    it('a scheduler pass skips a board whose PUT is under way (shards not synced yet) instead of failing', async () => {
      await ranking.putBoard({ name: 's', windows: H, shards: 3 });
      await ranking.increment('s', itemOnShard(1, 3), 1);
      await putOnShardZero(undefined, [{ name: 'h', periodSec: 7200, intervalSec: 3600 }], true);
      clock.advanceSec(3600); // the slot written is due
      // A claim of one board comes back full, yet the board put back waits for the next pass: no spinning.
      expect(await ranking.expireDue({ ...PASS, claimBatch: 1 })).toMatchObject({ failures: 0, skipped: 1 });
      expect(await ranking.expireDue(PASS)).toMatchObject({ visited: 0 });
      clock.advanceMs(1);
      await ranking.putBoard({ name: 's', windows: [{ name: 'h', period: '2h', interval: '1h' }], reset: true }); // finishes the sync
      expect(await ranking.expireDue(PASS)).toMatchObject({ visited: 1, failures: 0, skipped: 0 });
    });

    it('never moves a shard back to an older config when two PUTs race', async () => {
      await ranking.putBoard({ name: 's', windows: H, shards: 2 });
      const first = await redis.client.hgetall(cfgOf(1));
      await ranking.putBoard({ name: 's', windows: [...H, { name: 'd', period: '1d', interval: '1h' }] });
      const newer = await redis.client.hgetall(cfgOf(1));
      // The first PUT's sync arriving late:
      expect(
        await functions.call(RANKING.functions.shardSync, {
          keys: keysOf(1),
          version: first.version,
          windowsJson: first.windows,
          shards: Number(first.shards),
          maxItems: null,
          viewsJson: '[]',
          revision: Number(first.revision),
          nowMs: clock.nowMs(),
        }),
      ).toBe('unchanged');
      expect(await redis.client.hgetall(cfgOf(1))).toEqual(newer);
      expect(newer.version).toBe(await redis.client.hget(cfgOf(0), 'version'));
    });

    it('keeps the stored shard count when a PUT leaves shards out', async () => {
      await ranking.putBoard({ name: 's', windows: H, shards: 4 });
      await ranking.increment('s', 'x', 2);
      const put = await ranking.putBoard({
        name: 's',
        windows: [...H, { name: 'd', period: '1d', interval: '1h' }],
        reset: true,
      });
      expect(put.board.shards).toBe(4);
      expect((await ranking.item('s', 'h', 'x')).score).toBe(2);
    });

    it('finds and deletes shards a failed reduction left behind, on the next PUT and on delete', async () => {
      await ranking.putBoard({ name: 's', windows: H, shards: 4 });
      for (let i = 0; i < 30; i++) await ranking.increment('s', `item-${i}`, 1);
      await putOnShardZero(2, [{ name: 'h', periodSec: 3600, intervalSec: 3600 }], true); // died before deleting shards 2 and 3
      expect((await redis.keys(`board:s/3}*`)).length).toBeGreaterThan(0);
      await ranking.putBoard({ name: 's', windows: H, shards: 2 });
      expect([...(await redis.keys(`board:s/2}*`)), ...(await redis.keys(`board:s/3}*`))]).toEqual([]);
      await ranking.putBoard({ name: 's', windows: H, shards: 3, reset: true });
      await ranking.increment('s', itemOnShard(2, 3), 1);
      await putOnShardZero(1, [{ name: 'h', periodSec: 3600, intervalSec: 3600 }], true);
      await ranking.deleteBoard('s');
      expect(await redis.keys(`board:s*`)).toEqual([]);
    });

    it('answers 409, not 404, when a shard lacks its config', async () => {
      await ranking.putBoard({ name: 's', windows: H, shards: 3 });
      await redis.client.del(cfgOf(2));
      await expect(ranking.top('s', 'h', 0, 10)).rejects.toMatchObject({
        code: 'BOARD_INCOMPLETE',
        message: expect.stringMatching(/has a shard without its config/),
      });
      await ranking.putBoard({ name: 's', windows: H }); // repairs it
      expect((await ranking.top('s', 'h', 0, 10)).items).toEqual([]);
    });

    it('refuses pages deeper than the bound on a sharded board only', async () => {
      await ranking.putBoard({ name: 's', windows: H, shards: 2 });
      await expect(ranking.top('s', 'h', MAX_SHARDED_DEPTH_ITEMS, 1)).rejects.toThrow(InvalidInputError);
      expect((await ranking.top('s', 'h', MAX_SHARDED_DEPTH_ITEMS - 10, 10)).items).toEqual([]);
      expect((await ranking.top('b', 'm', MAX_SHARDED_DEPTH_ITEMS, 1)).items).toEqual([]);
    });
  });

  it('ranks scores beyond 14 significant digits exactly', async () => {
    await redis.client.zadd(raw('m:top'), '4503599627370497', 'x', '4503599627370498', 'y');
    expect((await ranking.item('b', 'm', 'x')).rank).toBe(2);
    expect((await ranking.item('b', 'm', 'y')).rank).toBe(1);
  });

  describe('config cache', () => {
    it('a second instance with a stale cached config reloads and retries once', async () => {
      const config = validateConfig({ ...redis.env });
      const other = rankingServiceOn(service, functions, config, clock);
      await other.increment('b', 'x', 1); // caches the current config
      await ranking.putBoard({
        name: 'b',
        windows: [
          { name: 'm', period: '3m', interval: '1m' },
          { name: 'h', period: '1h', interval: '1h' },
          { name: 'w', period: '7d', interval: '1d' },
        ],
      });
      const reply = (await other.increment('b', 'x', 1)).body;
      expect(Object.keys(reply.windows)).toEqual(['m', 'h', 'w']);
      expect(reply.windows.w).toEqual({ score: 1, rank: 1, previousRank: null });
      await ranking.deleteBoard('b');
      await expect(other.increment('b', 'x', 1)).rejects.toThrow(NotFoundError);
      expect(await boardKeys()).toEqual([]);
    });

    it('answers CONFIG_CHANGED when the config changes again between the reload and the retry', async () => {
      const store = new BoardsStore(service, functions, RankingSettings.from(validateConfig({ ...redis.env })));
      const cache = new BoardCache(store);
      let calls = 0;
      const refuseTwice = async () => {
        calls++;
        throw new StaleConfigError('TB_STALE_CONFIG board config changed');
      };
      await expect(cache.withBoard('b', refuseTwice)).rejects.toMatchObject({ code: 'CONFIG_CHANGED' });
      expect(calls).toBe(1); // nothing cached: one run with the stored config
      await expect(cache.withBoard('b', refuseTwice)).rejects.toMatchObject({ code: 'CONFIG_CHANGED' });
      expect(calls).toBe(3); // cached, then reloaded: two runs
    });

    it('answers BATCH_PARTIAL naming what was applied when one shard keeps refusing a batch', async () => {
      await ranking.putBoard({ name: 'p', windows: [{ name: 'h', period: '1h', interval: '1h' }], shards: 2 });
      const items = Array.from({ length: 20 }, (_, i) => `i${i}`);
      const onShard1 = items.filter((item) => shardOf(item, 2) === 1);
      const shard1 = `{${redis.prefix}board:p/1}:cfg`;
      const version = await redis.client.hget(shard1, 'version');
      await redis.client.hset(shard1, 'version', 'another');
      await expect(
        ranking.incrementBatch(
          'p',
          items.map((item) => ({ item, amount: 1 })),
        ),
      ).rejects.toMatchObject({
        code: 'BATCH_PARTIAL',
        message: `board "p" changed during the request: ${20 - onShard1.length} of 20 entries applied, ${onShard1.length} not; retry those`,
      });
      await redis.client.hset(shard1, 'version', version!);
      expect((await ranking.top('p', 'h', 0, 100)).items.map((row) => row.item).sort()).toEqual(
        items.filter((item) => shardOf(item, 2) === 0).sort(),
      );
    });
  });
});
