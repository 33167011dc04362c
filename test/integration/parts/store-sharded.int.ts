import { validateConfig } from '../../../src/common/config';
import { InvalidInputError, NotFoundError } from '../../../src/common/errors';
import { MAX_SHARDED_DEPTH_ITEMS } from '../../../src/ranking/core/ranking.limits';
import { RankingKeys } from '../../../src/ranking/core/ranking.keys';
import { RANKING } from '../../../src/ranking/ranking.functions';
import { WindowSpec } from '../../../src/ranking/core/window-math';
import { shardOf } from '../../../src/ranking/core/shard-math';
import { rankingServiceOn } from '../../../harness/ranking';
import { composeRanking } from '../../../harness/compose-ranking';
import { StaleConfigError } from '../../../src/ranking/core/ranking.errors';
import { TOPOLOGIES } from '../../../harness/redis';
import { PASS, useRankingStore } from '../../support/ranking-store';

describe.each(TOPOLOGIES)('ranking store: sharded boards, config cache (real Redis, %s)', (topology) => {
  const world = useRankingStore(topology);
  const { raw, boardKeys } = world;

  describe('sharded boards while their config changes', () => {
    const H = [{ name: 'h', period: '1h', interval: '1h' }];
    const keysOf = (shard: number) => new RankingKeys(world.redis.prefix).board('s', shard);
    const cfgOf = (shard: number, board = 's') =>
      shard === 0 ? raw('cfg', board) : `{${world.redis.prefix}board:${board}/${shard}}:cfg`;
    const itemOnShard = (shard: number, shards: number) =>
      Array.from({ length: 200 }, (_, i) => `item-${i}`).find((id) => shardOf(id, shards) === shard)!;
    /** Runs board_put on shard 0 only: a PUT that stopped before syncing the other shards. */
    const putOnShardZero = (shards: number | undefined, windows: WindowSpec[], reset: boolean) =>
      world.functions.call(RANKING.functions.boardPut, {
        keys: keysOf(0),
        windows,
        shards,
        maxItems: undefined,
        views: [],
        version: `half-${Math.random()}`,
        reset,
        nowMs: world.clock.nowMs(),
      });

    it('applies a write once when its rank read meets a PUT in progress, and says so with 409', async () => {
      await world.ranking.putBoard({ name: 's', windows: H, shards: 3 });
      const item = itemOnShard(1, 3);
      await world.ranking.increment('s', item, 1); // caches the config
      await putOnShardZero(
        undefined,
        [
          { name: 'h', periodSec: 3600, intervalSec: 3600 },
          { name: 'd', periodSec: 86400, intervalSec: 3600 },
        ],
        false,
      );
      await expect(world.ranking.increment('s', item, 5)).rejects.toMatchObject({
        code: 'WRITE_APPLIED_RANK_UNKNOWN',
        message: expect.stringMatching(/the write was applied/),
      });
      await world.ranking.putBoard({ name: 's', windows: [...H, { name: 'd', period: '1d', interval: '1h' }] }); // finishes the sync
      expect((await world.ranking.item('s', 'h', item)).score).toBe(6);
    });

    it('a scheduler pass skips a board whose PUT is under way (shards not synced yet) instead of failing', async () => {
      await world.ranking.putBoard({ name: 's', windows: H, shards: 3 });
      await world.ranking.increment('s', itemOnShard(1, 3), 1);
      await putOnShardZero(undefined, [{ name: 'h', periodSec: 7200, intervalSec: 3600 }], true);
      world.clock.advanceSec(3600); // the slot written is due
      // A claim of one board comes back full, yet the board put back waits for the next pass: no spinning.
      expect(await world.ranking.expireDue({ ...PASS, claimBatch: 1 })).toMatchObject({ failures: 0, skipped: 1 });
      expect(await world.ranking.expireDue(PASS)).toMatchObject({ visited: 0 });
      world.clock.advanceMs(1);
      await world.ranking.putBoard({ name: 's', windows: [{ name: 'h', period: '2h', interval: '1h' }], reset: true }); // finishes the sync
      expect(await world.ranking.expireDue(PASS)).toMatchObject({ visited: 1, failures: 0, skipped: 0 });
    });

    it('never moves a shard back to an older config when two PUTs race', async () => {
      await world.ranking.putBoard({ name: 's', windows: H, shards: 2 });
      const first = await world.redis.client.hgetall(cfgOf(1));
      await world.ranking.putBoard({ name: 's', windows: [...H, { name: 'd', period: '1d', interval: '1h' }] });
      const newer = await world.redis.client.hgetall(cfgOf(1));
      // The first PUT's sync arriving late:
      expect(
        await world.functions.call(RANKING.functions.shardSync, {
          keys: keysOf(1),
          version: first.version,
          windowsJson: first.windows,
          shards: Number(first.shards),
          maxItems: null,
          viewsJson: '[]',
          revision: Number(first.revision),
          nowMs: world.clock.nowMs(),
        }),
      ).toBe('unchanged');
      expect(await world.redis.client.hgetall(cfgOf(1))).toEqual(newer);
      expect(newer.version).toBe(await world.redis.client.hget(cfgOf(0), 'version'));
    });

    it('keeps the stored shard count when a PUT leaves shards out', async () => {
      await world.ranking.putBoard({ name: 's', windows: H, shards: 4 });
      await world.ranking.increment('s', 'x', 2);
      const put = await world.ranking.putBoard({
        name: 's',
        windows: [...H, { name: 'd', period: '1d', interval: '1h' }],
        reset: true,
      });
      expect(put.board.shards).toBe(4);
      expect((await world.ranking.item('s', 'h', 'x')).score).toBe(2);
    });

    it('finds and deletes shards a failed reduction left behind, on the next PUT and on delete', async () => {
      await world.ranking.putBoard({ name: 's', windows: H, shards: 4 });
      for (let i = 0; i < 30; i++) await world.ranking.increment('s', `item-${i}`, 1);
      await putOnShardZero(2, [{ name: 'h', periodSec: 3600, intervalSec: 3600 }], true); // died before deleting shards 2 and 3
      expect((await world.redis.keys(`board:s/3}*`)).length).toBeGreaterThan(0);
      await world.ranking.putBoard({ name: 's', windows: H, shards: 2 });
      expect([...(await world.redis.keys(`board:s/2}*`)), ...(await world.redis.keys(`board:s/3}*`))]).toEqual([]);
      await world.ranking.putBoard({ name: 's', windows: H, shards: 3, reset: true });
      await world.ranking.increment('s', itemOnShard(2, 3), 1);
      await putOnShardZero(1, [{ name: 'h', periodSec: 3600, intervalSec: 3600 }], true);
      await world.ranking.deleteBoard('s');
      expect(await world.redis.keys(`board:s*`)).toEqual([]);
    });

    it('answers 409, not 404, when a shard lacks its config', async () => {
      await world.ranking.putBoard({ name: 's', windows: H, shards: 3 });
      await world.redis.client.del(cfgOf(2));
      await expect(world.ranking.top('s', 'h', 0, 10)).rejects.toMatchObject({
        code: 'BOARD_INCOMPLETE',
        message: expect.stringMatching(/has a shard without its config/),
      });
      await world.ranking.putBoard({ name: 's', windows: H }); // repairs it
      expect((await world.ranking.top('s', 'h', 0, 10)).items).toEqual([]);
    });

    it('refuses pages deeper than the bound on a sharded board only', async () => {
      await world.ranking.putBoard({ name: 's', windows: H, shards: 2 });
      await expect(world.ranking.top('s', 'h', MAX_SHARDED_DEPTH_ITEMS, 1)).rejects.toThrow(InvalidInputError);
      expect((await world.ranking.top('s', 'h', MAX_SHARDED_DEPTH_ITEMS - 10, 10)).items).toEqual([]);
      expect((await world.ranking.top('b', 'm', MAX_SHARDED_DEPTH_ITEMS, 1)).items).toEqual([]);
    });
  });

  it('ranks scores beyond 14 significant digits exactly', async () => {
    await world.redis.client.zadd(raw('m:top'), '4503599627370497', 'x', '4503599627370498', 'y');
    expect((await world.ranking.item('b', 'm', 'x')).rank).toBe(2);
    expect((await world.ranking.item('b', 'm', 'y')).rank).toBe(1);
  });

  describe('config cache', () => {
    it('a second instance with a stale cached config reloads and retries once', async () => {
      const config = validateConfig({ ...world.redis.env });
      const other = await rankingServiceOn(world.service, world.functions, config, world.clock);
      await other.increment('b', 'x', 1); // caches the current config
      await world.putB({ also: [{ name: 'w', period: '7d', interval: '1d' }] });
      const reply = (await other.increment('b', 'x', 1)).body;
      expect(Object.keys(reply.windows)).toEqual(['m', 'h', 'w']);
      expect(reply.windows.w).toEqual({ score: 1, rank: 1, previousRank: null });
      await world.ranking.deleteBoard('b');
      await expect(other.increment('b', 'x', 1)).rejects.toThrow(NotFoundError);
      expect(await boardKeys()).toEqual([]);
    });

    it('answers CONFIG_CHANGED when the config changes again between the reload and the retry', async () => {
      // A second instance's cache: nothing cached yet.
      const { cache } = await composeRanking(
        world.service,
        world.functions,
        validateConfig({ ...world.redis.env }),
        world.clock,
      );
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
      await world.ranking.putBoard({ name: 'p', windows: [{ name: 'h', period: '1h', interval: '1h' }], shards: 2 });
      const items = Array.from({ length: 20 }, (_, i) => `i${i}`);
      const onShard1 = items.filter((item) => shardOf(item, 2) === 1);
      const shard1 = `{${world.redis.prefix}board:p/1}:cfg`;
      const version = await world.redis.client.hget(shard1, 'version');
      await world.redis.client.hset(shard1, 'version', 'another');
      await expect(
        world.ranking.incrementBatch(
          'p',
          items.map((item) => ({ item, amount: 1 })),
        ),
      ).rejects.toMatchObject({
        code: 'BATCH_PARTIAL',
        message: `board "p" changed during the request: ${20 - onShard1.length} of 20 entries applied, ${onShard1.length} not; retry those`,
      });
      await world.redis.client.hset(shard1, 'version', version!);
      expect((await world.ranking.top('p', 'h', 0, 100)).items.map((row) => row.item).sort()).toEqual(
        items.filter((item) => shardOf(item, 2) === 0).sort(),
      );
    });
  });
});
