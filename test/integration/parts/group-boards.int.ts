import { startRankingService, useRankingService } from '../../../harness/ranking';
import { TOPOLOGIES } from '../../../harness/redis';
import { RankingKeys } from '../../../src/ranking/core/ranking.keys';
import { shardOf } from '../../../src/ranking/core/shard-math';
import { GROUP_SETTLE_PERIOD_MS } from '../../../src/ranking/options/group-of/group-of.limits';

const WINDOW = { name: 'w', period: 60, interval: 20 };

describe.each(TOPOLOGIES)(
  "group boards: what they refuse, what their deletion leaves, the scheduler's settle (%s)",
  (topology) => {
    const setup = useRankingService(topology);
    let n = 0;

    /** A member board with a group board over it, two groups and three scored members. */
    async function groupBoards(): Promise<{ member: string; group: string }> {
      const member = `m${n}`;
      const group = `g${n++}`;
      await setup.ranking.putBoard({ name: member, windows: [WINDOW] });
      await setup.ranking.putBoard({ name: group, groupOf: { board: member, window: 'w', top: 2, decay: 1 } });
      for (const [item, team] of [
        ['a', 'red'],
        ['b', 'red'],
        ['c', 'blue'],
      ]) {
        await setup.groupBoards.setMember({ name: group, group: team, item });
        await setup.ranking.increment(member, item, 3);
      }
      await setup.ranking.top(group, undefined, 0, 10); // settled once: every key the group board makes exists
      return { member, group };
    }

    it('refuses increments, scores, batches and likes on a group board (409 GROUP_BOARD_READ_ONLY), nothing written', async () => {
      const { group } = await groupBoards();
      const refused = { code: 'GROUP_BOARD_READ_ONLY' };
      await expect(setup.ranking.increment(group, 'red', 5)).rejects.toMatchObject(refused);
      await expect(setup.ranking.score(group, 'red', 5)).rejects.toMatchObject(refused);
      await expect(setup.ranking.incrementBatch(group, [{ item: 'red', amount: 1 }])).rejects.toMatchObject(refused);
      await expect(setup.ranking.like(group, 'red', 'u1', false)).rejects.toMatchObject(refused);
      expect(await setup.redis.dataKeys(`board:${group}}*`)).toEqual([`{${setup.redis.prefix}board:${group}}:cfg`]);
      const top = await setup.ranking.top(group, undefined, 0, 10);
      expect(top.items.map(({ item, score }) => ({ item, score }))).toEqual([
        { item: 'red', score: 6 },
        { item: 'blue', score: 3 },
      ]);
    });

    it('a deleted group board leaves no key under its member board, which writes on without it', async () => {
      const { member, group } = await groupBoards();
      expect(await setup.redis.keys(`board:${member}}:w%${group}:*`)).not.toEqual([]);
      await setup.ranking.deleteBoard(group);
      expect(await setup.redis.keys(`board:${group}}*`)).toEqual([]);
      expect(await setup.redis.keys(`*%${group}:*`)).toEqual([]);
      await setup.ranking.increment(member, 'a', 1);
      expect(await setup.redis.keys(`*%${group}:*`)).toEqual([]);
      const cfg = await setup.redis.client.hget(`{${setup.redis.prefix}board:${member}}:cfg`, 'groupedBy');
      expect(cfg).toBeNull();
    });

    it("a deleted member board leaves no key of its prefix, its group boards' groups included", async () => {
      const { member, group } = await groupBoards();
      const other = `${group}x`;
      await setup.ranking.putBoard({ name: other, groupOf: { board: member, window: 'w', top: 1, decay: 1 } });
      await setup.groupBoards.setMember({ name: other, group: 'solo', item: 'c' });
      await setup.ranking.deleteBoard(member);
      expect(await setup.redis.keys(`board:${member}}*`)).toEqual([]);
      await setup.ranking.deleteBoard(group);
      await setup.ranking.deleteBoard(other);
      expect(await setup.redis.keys(`board:${group}}*`)).toEqual([]);
      expect(await setup.redis.keys(`board:${other}}*`)).toEqual([]);
    });

    it("a deleted sharded member board, then its group board, leave no key on the shards the group board's members are not on", async () => {
      const member = `m${n}`;
      const group = `g${n++}`;
      await setup.ranking.putBoard({ name: member, windows: [WINDOW], shards: 4 });
      await setup.ranking.putBoard({ name: group, groupOf: { board: member, window: 'w', top: 2, decay: 1 } });
      const item = ['a', 'b', 'c', 'd', 'e', 'f'].find((id) => shardOf(id, 4) === 0)!;
      await setup.groupBoards.setMember({ name: group, group: 'red', item });
      await setup.ranking.increment(member, item, 3);
      // A settle round: a call on every shard, the three without a member too.
      await setup.ranking.top(group, undefined, 0, 10);
      await setup.ranking.deleteBoard(member);
      await setup.ranking.deleteBoard(group);
      expect(await setup.redis.keys(`*%${group}:*`)).toEqual([]);
      expect(await setup.redis.keys(`board:${member}*`)).toEqual([]);
    });

    it('the scheduler settles a group board nobody reads, on one instance of two, and keeps it due', async () => {
      setup.clock.setMs(1_600_000_000_000);
      const { member, group } = await groupBoards();
      await setup.ranking.increment(member, 'a', 4);
      const base = `{${setup.redis.prefix}board:${member}}:w%${group}:`;
      expect(await setup.redis.client.smembers(`${base}dirty`)).toEqual(['red']);
      const second = await startRankingService(setup.redis, setup.clock);
      try {
        const visits = [setup.groupBoards, second.groupBoards].map((each) => jest.spyOn(each, 'settleDue'));
        const pass = { leaseMs: 30_000, claimBatch: 10 };
        await Promise.all([setup.ranking.expireDue(pass), second.ranking.expireDue(pass)]);
        const visited = visits.flatMap((spy) => spy.mock.calls).filter(([board]) => board.config.name === group);
        expect(visited).toHaveLength(1);
        expect(await setup.redis.client.scard(`${base}dirty`)).toBe(0);
        expect(await setup.redis.client.zscore(`${base}top`, 'red')).toBe('10');
        const due = await setup.redis.client.zscore(new RankingKeys(setup.redis.prefix).dueIndex(), group);
        expect(Number(due)).toBe(setup.clock.nowMs() + GROUP_SETTLE_PERIOD_MS);
      } finally {
        await second.redisService.onApplicationShutdown();
      }
    });
  },
);
